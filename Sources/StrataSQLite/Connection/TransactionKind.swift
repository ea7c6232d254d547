/// How `BEGIN` acquires locks.
public enum TransactionKind: String, Sendable {
    /// Locks are taken when first needed: a read lock at the first read, a write lock at the
    /// first write (which can then fail with `SQLITE_BUSY`).
    case deferred = "DEFERRED"
    /// The write lock is taken at `BEGIN`. Writers always use it, so a write transaction never
    /// fails half-way for lack of the lock.
    case immediate = "IMMEDIATE"
    /// Like immediate; in rollback-journal mode it also keeps readers out.
    case exclusive = "EXCLUSIVE"
}

/// What a transaction or savepoint closure asks for at its end.
public enum TransactionCompletion: Sendable {
    case commit
    case rollback
}
