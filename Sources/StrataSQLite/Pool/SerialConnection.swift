import Dispatch
import Synchronization

/// One connection and the actor that owns it.
///
/// The actor's executor is the connection's dispatch queue, so `await connection.perform`
/// hops straight onto that queue. Synchronous callers reach the same queue with
/// `DispatchQueue.sync`; both paths are serialized by the queue, which is what confines the
/// `Database`. Both first wait for the connection's ``admission`` permit, where a cancelled
/// task can leave the line (a job on the dispatch queue cannot be taken back).
actor SerialConnection {
    nonisolated let executor: DatabaseExecutor
    nonisolated let interruptState: InterruptState
    /// One access at a time, first come first served; cancellable while waiting.
    nonisolated let admission = AccessPermits(capacity: 1)
    // Safe: the database is only touched on `executor.queue` — by the actor's isolated methods,
    // whose executor is that queue, and inside `executor.queue.sync` — never elsewhere.
    nonisolated(unsafe) private let database: Database
    /// Set by ``close()`` called from inside one of this connection's own jobs: the job closes
    /// the connection when it ends, as closing from inside would wait for itself.
    private nonisolated let closesAfterCurrentJob = Atomic<Bool>(false)

    nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    private static let jobCounter = Atomic<UInt64>(0)

    init(database: Database, executor: DatabaseExecutor) {
        self.database = database
        self.executor = executor
        self.interruptState = database.interruptState
        // The thread that opened and prepared the connection gives it up: from now on only the
        // jobs below may use it.
        database.confinement.release()
    }

    /// Runs `body` on the connection's queue, tying task cancellation to the statement it runs.
    ///
    /// Nothing between being handed the admission permit and releasing it runs on Swift's
    /// cooperative pool: a task that waits for the permit waits on ``PermitWaitExecutor`` (and
    /// resumes there), the job runs on the connection's queue, and the permit is released there
    /// at the job's end, with `afterJob`. Why: a synchronous access waiting for the same
    /// permit (`performSync`) blocks its thread, which may be a cooperative one. Were the
    /// permit holder to need a cooperative thread to start or to finish, a few such waiters —
    /// two, on a two-core machine — would block every cooperative thread and the process would
    /// deadlock. Task-locals still reach the job: it runs in the caller's task.
    ///
    /// - Parameters:
    ///   - access: the method lending the connection, named if it escapes `body`.
    ///   - afterJob: runs on the connection's queue after the job (whatever its outcome),
    ///     before the caller resumes: for the pool to give back what it lent the job.
    /// - Throws: `CancellationError` when the task is cancelled while waiting for the
    ///   connection or while `body` runs (then its statement is interrupted).
    nonisolated func perform<T: Sendable>(
        _ access: AccessKind, afterJob: (@Sendable () -> Void)? = nil, _ body: @Sendable (Database) throws -> T
    ) async throws -> T {
        if admission.tryAcquire() {
            return try await performHoldingPermit(access, afterJob: afterJob, body)
        }
        return try await withTaskExecutorPreference(PermitWaitExecutor.shared) {
            try await admission.acquire()
            return try await performHoldingPermit(access, afterJob: afterJob, body)
        }
    }

    private nonisolated func performHoldingPermit<T: Sendable>(
        _ access: AccessKind, afterJob: (@Sendable () -> Void)?, _ body: @Sendable (Database) throws -> T
    ) async throws -> T {
        let token = Self.jobCounter.add(1, ordering: .relaxed).newValue
        return try await withTaskCancellationHandler {
            try await self.performIsolated(access, token: token, afterJob: afterJob, body)
        } onCancel: {
            self.interruptState.cancel(job: token)
        }
    }

    private func performIsolated<T: Sendable>(
        _ access: AccessKind, token: UInt64, afterJob: (@Sendable () -> Void)?, _ body: @Sendable (Database) throws -> T
    ) throws -> T {
        // Released here, on the connection's queue, whatever happens (see perform).
        defer {
            admission.release()
            afterJob?()
        }
        try Task.checkCancellation()
        interruptState.beginJob(token)
        defer { interruptState.endJob() }
        // A cancellation that arrived between the check above and beginJob found no job to
        // interrupt; it is visible here.
        try Task.checkCancellation()
        try database.checkOpen()
        return try run(access) { db in
            try db.runSchemaChangeHooks(before: access)
            return try body(db)
        }
    }

    /// Runs `body` on the connection's queue, blocking the calling thread until it returns.
    nonisolated func performSync<T>(_ access: AccessKind, _ body: (Database) throws -> T) throws -> T {
        admission.acquireSync()
        defer { admission.release() }
        return try executor.queue.sync {
            try database.checkOpen()
            return try run(access) { db in
                try db.runSchemaChangeHooks(before: access)
                return try body(db)
            }
        }
    }

    /// Lends the open connection to `body`, on the thread running the job, then ends the job.
    ///
    /// The connection stays confined to this thread until the job's end has been announced
    /// (`jobDidEnd`), which reads it.
    private nonisolated func run<T>(_ access: AccessKind, _ body: (Database) throws -> T) rethrows -> T {
        let previous = database.confinement.begin(access)
        defer { database.confinement.end(restoring: previous) }
        defer { jobDidEnd() }
        return try body(database)
    }

    /// Runs `body` on the connection's queue without waiting for it: the job is queued once the
    /// connection's admission permit is held, and `body` receives the connection, or the error
    /// that kept it from running (a closed connection).
    nonisolated func performAsync(_ access: AccessKind, _ body: @escaping @Sendable (Result<Database, any Error>) -> Void) {
        admission.acquire { [self] in
            executor.queue.async { [self] in
                defer { admission.release() }
                runJob(access, body)
            }
        }
    }

    /// Runs `body` at once on the calling thread when the connection is free, and returns nil
    /// without waiting when it is not. `queue.sync` on an idle queue runs the block on the
    /// caller's thread, so no other thread is woken.
    nonisolated func performIfFree<T>(_ access: AccessKind, _ body: (Result<Database, any Error>) -> T) -> T? {
        guard admission.tryAcquire() else { return nil }
        defer { admission.release() }
        return executor.queue.sync { runJob(access, body) }
    }

    /// One job on the connection's queue, its admission permit held: `body` gets the
    /// connection, or the error of a closed one (then the job has nothing to end).
    ///
    /// The job has a token, as one of `perform` has, so that whoever started it without a task
    /// (an observer's fetch) can cancel it from another thread: see `Database.currentJob`.
    private nonisolated func runJob<T>(_ access: AccessKind, _ body: (Result<Database, any Error>) -> T) -> T {
        do {
            try database.checkOpen()
        } catch {
            return body(.failure(error))
        }
        interruptState.beginJob(Self.jobCounter.add(1, ordering: .relaxed).newValue)
        defer { interruptState.endJob() }
        return run(access) { body(.success($0)) }
    }

    private nonisolated func jobDidEnd() {
        database.jobDidEnd()
        if closesAfterCurrentJob.load(ordering: .acquiring) {
            database.close()
        }
    }

    /// Closes the connection once the job running now (if any) has ended. Called from inside
    /// one of the connection's own jobs, it returns at once and the job closes the connection
    /// when it ends: waiting there would wait for itself forever.
    nonisolated func close() {
        if executor.isCurrent {
            closesAfterCurrentJob.store(true, ordering: .releasing)
            return
        }
        executor.queue.sync {
            database.close()
        }
    }
}
