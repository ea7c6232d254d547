import Dispatch
import Synchronization

/// One connection and the actor that owns it.
///
/// The actor's executor is the connection's dispatch queue, so `await connection.perform`
/// hops straight onto that queue. Synchronous callers reach the same queue with
/// `DispatchQueue.sync`; both paths are serialized by the queue, which is what confines the
/// `Database`.
actor SerialConnection {
    nonisolated let executor: DatabaseExecutor
    nonisolated let interruptState: InterruptState
    nonisolated(unsafe) private let database: Database

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    private static let jobCounter = Atomic<UInt64>(0)

    init(database: Database, executor: DatabaseExecutor) {
        self.database = database
        self.executor = executor
        self.interruptState = database.interruptState
    }

    /// Runs `body` on the connection's queue, tying task cancellation to the statement it runs.
    nonisolated func perform<T: Sendable>(_ body: @Sendable (Database) throws -> T) async throws -> T {
        let token = Self.jobCounter.add(1, ordering: .relaxed).newValue
        return try await withTaskCancellationHandler {
            try await self.performIsolated(token: token, body)
        } onCancel: {
            self.interruptState.cancel(job: token)
        }
    }

    private func performIsolated<T: Sendable>(token: UInt64, _ body: @Sendable (Database) throws -> T) throws -> T {
        try Task.checkCancellation()
        interruptState.beginJob(token)
        defer { interruptState.endJob() }
        // A cancellation that arrived between the check above and beginJob found no job to
        // interrupt; it is visible here.
        try Task.checkCancellation()
        defer { database.jobDidEnd() }
        return try body(database)
    }

    /// Runs `body` on the connection's queue, blocking the calling thread until it returns.
    nonisolated func performSync<T>(_ body: (Database) throws -> T) throws -> T {
        try executor.queue.sync {
            defer { database.jobDidEnd() }
            return try body(database)
        }
    }

    /// Closes the connection once the jobs queued before have run.
    nonisolated func close() {
        executor.queue.sync {
            database.close()
        }
    }
}
