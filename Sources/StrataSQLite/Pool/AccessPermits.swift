import Dispatch
import Synchronization

/// Admission to connections: at most `capacity` accesses at once, strictly first come, first
/// served, and barriers that wait until no access runs and keep new ones out until they end.
///
/// A pool admits its reads with one (capacity: the reader count) and its writes with another
/// (capacity 1). Admission happens *before* a job is queued on a connection's dispatch queue:
/// once queued, a job cannot be taken back, so a cancelled task waiting there would wait for
/// the job ahead of it, possibly minutes. Waiting here instead, a cancelled task leaves the
/// line at once with `CancellationError`, holding nothing.
final class AccessPermits: Sendable {
    private enum Resumption {
        case task(CheckedContinuation<Void, any Error>)
        case thread(DispatchSemaphore)
        case callback(@Sendable () -> Void)

        func resume() {
            switch self {
            case .task(let continuation): continuation.resume()
            case .thread(let semaphore): semaphore.signal()
            case .callback(let granted): granted()
            }
        }
    }

    private struct Waiter {
        var id: UInt64
        var wantsAll: Bool
        var resumption: Resumption
    }

    private struct State {
        var inUse = 0
        var waiters: [Waiter] = []
        var nextWaiterID: UInt64 = 1
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Waits for a permit (all of them with `all`).
    ///
    /// - Throws: `CancellationError` if the task is cancelled before the permit is granted;
    ///   no permit is held then.
    func acquire(all: Bool = false) async throws {
        let acquired = state.withLock { take(all: all, state: &$0) }
        if acquired { return }
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Bool, CancellationError> in
                    // Checked under the lock: a cancellation that ran its handler before the
                    // waiter was queued found nothing to remove, and is caught here.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if take(all: all, state: &state) { return .success(true) }
                    state.waiters.append(Waiter(id: id, wantsAll: all, resumption: .task(continuation)))
                    return .success(false)
                }
                switch outcome {
                case .failure(let error): continuation.resume(throwing: error)
                case .success(true): continuation.resume()
                case .success(false): break
                }
            }
        } onCancel: {
            let removed = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            if case .task(let continuation)? = removed?.resumption {
                continuation.resume(throwing: CancellationError())
                // A barrier that left the head of the line may unblock the reads behind it.
                release(count: 0)
            }
        }
    }

    /// Waits for a permit, blocking the calling thread.
    func acquireSync(all: Bool = false) {
        let semaphore = DispatchSemaphore(value: 0)
        let acquired = state.withLock { state -> Bool in
            if take(all: all, state: &state) { return true }
            state.waiters.append(Waiter(id: 0, wantsAll: all, resumption: .thread(semaphore)))
            return false
        }
        if !acquired { semaphore.wait() }
    }

    /// Calls `granted` once a permit is held: at once on this thread when one is free, else on
    /// the thread that releases the permit it gets. Neither blocks nor needs a task, so it can
    /// be called from a connection's own queue (a commit callback) without waiting there.
    func acquire(then granted: @escaping @Sendable () -> Void) {
        let acquired = state.withLock { state -> Bool in
            if take(all: false, state: &state) { return true }
            state.waiters.append(Waiter(id: 0, wantsAll: false, resumption: .callback(granted)))
            return false
        }
        if acquired { granted() }
    }

    /// Whether anyone waits for a permit now.
    var hasWaiters: Bool {
        state.withLock { !$0.waiters.isEmpty }
    }

    /// Takes a permit when one is free and nobody waits for one; never waits.
    func tryAcquire() -> Bool {
        state.withLock { take(all: false, state: &$0) }
    }

    /// Gives back the permit (all of them with `all`) and admits the waiters now allowed in.
    func release(all: Bool = false) {
        release(count: all ? capacity : 1)
    }

    private func release(count: Int) {
        let resumed = state.withLock { state -> [Resumption] in
            state.inUse -= count
            var resumed: [Resumption] = []
            while let first = state.waiters.first {
                if first.wantsAll {
                    guard state.inUse == 0 else { break }
                    state.inUse = capacity
                } else {
                    guard state.inUse < capacity else { break }
                    state.inUse += 1
                }
                resumed.append(first.resumption)
                state.waiters.removeFirst()
            }
            return resumed
        }
        for resumption in resumed { resumption.resume() }
    }

    private func take(all: Bool, state: inout State) -> Bool {
        guard state.waiters.isEmpty else { return false }
        if all {
            guard state.inUse == 0 else { return false }
            state.inUse = capacity
        } else {
            guard state.inUse < capacity else { return false }
            state.inUse += 1
        }
        return true
    }
}
