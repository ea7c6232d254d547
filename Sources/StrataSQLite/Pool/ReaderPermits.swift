import Dispatch
import Synchronization

/// Admission to a pool's readers: at most `capacity` reads at once, and barriers that wait
/// until no read runs and keep new reads out until they are done.
///
/// Strictly first-come first-served, so a barrier waiting for readers is not starved by a
/// stream of new reads, and a read queued behind a barrier waits for it.
final class ReaderPermits: Sendable {
    private enum Resumption {
        case task(CheckedContinuation<Void, Never>)
        case thread(DispatchSemaphore)

        func resume() {
            switch self {
            case .task(let continuation): continuation.resume()
            case .thread(let semaphore): semaphore.signal()
            }
        }
    }

    private struct Waiter {
        var wantsAll: Bool
        var resumption: Resumption
    }

    private struct State {
        var inUse = 0
        var waiters: [Waiter] = []
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    func acquire(all: Bool = false) async {
        let acquired = state.withLock { take(all: all, state: &$0) }
        if acquired { return }
        await withCheckedContinuation { continuation in
            let acquiredNow = state.withLock { state -> Bool in
                if take(all: all, state: &state) { return true }
                state.waiters.append(Waiter(wantsAll: all, resumption: .task(continuation)))
                return false
            }
            if acquiredNow { continuation.resume() }
        }
    }

    func acquireSync(all: Bool = false) {
        let semaphore = DispatchSemaphore(value: 0)
        let acquired = state.withLock { state -> Bool in
            if take(all: all, state: &state) { return true }
            state.waiters.append(Waiter(wantsAll: all, resumption: .thread(semaphore)))
            return false
        }
        if !acquired { semaphore.wait() }
    }

    func release(all: Bool = false) {
        let resumed = state.withLock { state -> [Resumption] in
            state.inUse -= all ? capacity : 1
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
