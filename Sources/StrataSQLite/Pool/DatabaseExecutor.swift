import Dispatch

/// A serial executor backed by its own dispatch queue.
///
/// Connections run their blocking SQLite calls here, never on Swift's cooperative thread pool:
/// a query that takes a second occupies one dispatch thread, not one of the few cooperative
/// threads every task of the process shares.
final class DatabaseExecutor: SerialExecutor, Sendable {
    let queue: DispatchQueue
    private static let key = DispatchSpecificKey<ObjectIdentifier>()

    init(label: String, owner: AccessOwner) {
        queue = DispatchQueue(label: label)
        queue.setSpecific(key: AccessOwner.key, value: owner)
        queue.setSpecific(key: Self.key, value: ObjectIdentifier(self))
    }

    /// Whether the current thread runs a job of this executor.
    var isCurrent: Bool {
        DispatchQueue.getSpecific(key: Self.key) == ObjectIdentifier(self)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async {
            job.runSynchronously(on: executor)
        }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}

/// Identifies the queue or pool a connection belongs to, so a synchronous access from inside
/// one of its own closures is detected (it would wait for itself forever) and throws instead.
final class AccessOwner: Sendable {
    static let key = DispatchSpecificKey<AccessOwner>()
    let description: String

    init(description: String) {
        self.description = description
    }

    /// Whether the current thread is running a closure of a connection owned by `self`.
    var isCurrent: Bool {
        DispatchQueue.getSpecific(key: Self.key) === self
    }

    func checkNotReentrant(_ method: String) throws {
        if isCurrent {
            throw DatabaseAccessError(
                .reentrantAccess,
                "\(method) was called from inside another access to \(description); it would wait for itself forever. Use the `db` argument of the enclosing closure instead."
            )
        }
    }
}
