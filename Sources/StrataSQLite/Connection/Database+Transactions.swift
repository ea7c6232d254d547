extension Database {
    /// Runs `body` in a transaction and commits or rolls back as it asks.
    ///
    /// If `body` throws, the transaction is rolled back and the error rethrown. SQLite rolls
    /// some failures back by itself (`SQLITE_FULL`, `SQLITE_IOERR`, `SQLITE_BUSY`,
    /// `SQLITE_NOMEM`, an interrupt); the rollback here is skipped when no transaction is open
    /// any more, so the original error is the one you see.
    ///
    /// - Parameters:
    ///   - kind: defaults to the connection's ``defaultTransactionKind`` (`IMMEDIATE` on
    ///     writers).
    ///   - body: the transaction's work; it returns whether to commit or roll back.
    public func inTransaction(_ kind: TransactionKind? = nil, _ body: () throws -> TransactionCompletion) throws {
        try runTransaction(kind) { ((), try body()) }
    }

    /// Runs `body` in a transaction that commits unless `body` throws, and returns its result.
    public func transaction<T>(_ kind: TransactionKind? = nil, _ body: () throws -> T) throws -> T {
        try runTransaction(kind) { (try body(), .commit) }
    }

    /// Runs `body` in a savepoint, which nests: a rolled-back savepoint undoes only its own
    /// changes. Outside any transaction it begins a transaction of the default kind instead, so
    /// a writer's savepoint still takes the write lock up front.
    public func inSavepoint(_ body: () throws -> TransactionCompletion) throws {
        try runSavepoint { ((), try body()) }
    }

    /// Runs `body` in a savepoint that is released unless `body` throws (then only the
    /// savepoint's changes are undone), and returns its result.
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        try runSavepoint { (try body(), .commit) }
    }

    private func runTransaction<T>(_ kind: TransactionKind?, _ body: () throws -> (T, TransactionCompletion)) throws -> T {
        try execute(sql: "BEGIN \((kind ?? defaultTransactionKind).rawValue) TRANSACTION")
        let (result, completion): (T, TransactionCompletion)
        do {
            (result, completion) = try body()
        } catch {
            rollbackIfNeeded()
            throw error
        }
        switch completion {
        case .commit:
            do {
                try execute(sql: "COMMIT TRANSACTION")
            } catch {
                // A failed COMMIT (SQLITE_BUSY on a shared in-memory database, a deferred
                // foreign key violation) leaves the transaction open: roll back so the
                // connection is usable, and report the commit's error.
                rollbackIfNeeded()
                throw error
            }
        case .rollback:
            rollbackIfNeeded()
        }
        return result
    }

    private func runSavepoint<T>(_ body: () throws -> (T, TransactionCompletion)) throws -> T {
        guard isInsideTransaction else {
            return try runTransaction(nil, body)
        }
        savepointCounter += 1
        let name = "strata_savepoint_\(savepointCounter)"
        defer { savepointCounter -= 1 }
        try execute(sql: "SAVEPOINT \(name)")
        let (result, completion): (T, TransactionCompletion)
        do {
            (result, completion) = try body()
        } catch {
            if isInsideTransaction {
                try? executeIgnoringCancellation(sql: "ROLLBACK TRANSACTION TO SAVEPOINT \(name)")
                try? executeIgnoringCancellation(sql: "RELEASE SAVEPOINT \(name)")
            }
            throw error
        }
        switch completion {
        case .commit:
            try execute(sql: "RELEASE SAVEPOINT \(name)")
        case .rollback:
            try execute(sql: "ROLLBACK TRANSACTION TO SAVEPOINT \(name)")
            try execute(sql: "RELEASE SAVEPOINT \(name)")
        }
        return result
    }

    func rollbackIfNeeded() {
        guard isInsideTransaction else { return }
        // A rollback can only fail when the connection is already broken; the caller is
        // reporting the error that led here, which is the one worth seeing.
        // A cancelled job must still roll back, or its changes would stay pending in the
        // connection for the next job to commit.
        try? executeIgnoringCancellation(sql: "ROLLBACK TRANSACTION")
    }
}
