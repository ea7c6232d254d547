import Dispatch
import Synchronization

/// Where an async access waits for a connection or a reader, and resumes once it has one: a
/// dispatch queue, not Swift's cooperative pool.
///
/// The cooperative pool has one thread per core, and a synchronous access blocks one of them
/// while it waits for the same permit. A task handed the permit must be able to run even when
/// every cooperative thread is blocked that way, or nothing would ever release the permit:
/// dispatch adds threads when its workers block, the cooperative pool does not.
final class PermitWaitExecutor: TaskExecutor {
    static let shared = PermitWaitExecutor()

    private let queue = DispatchQueue(label: "strata.permit-wait", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// An action that runs once, whichever of its callers comes first.
final class OnceAction: Sendable {
    private let done = Atomic<Bool>(false)
    private let action: @Sendable () -> Void

    init(_ action: @escaping @Sendable () -> Void) {
        self.action = action
    }

    @Sendable func run() {
        if !done.exchange(true, ordering: .acquiringAndReleasing) { action() }
    }
}
