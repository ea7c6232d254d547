import StrataSQLite

// "Too many SQL variables": SQLite refuses a statement that binds more values than
// SQLITE_LIMIT_VARIABLE_NUMBER (32,766 by default), which a multi-row VALUES of a few thousand
// records reaches. Running such an insert splits its rows into several statements, inside one
// savepoint so the insert stays all-or-nothing (see QueryStatement.forEachCheckedFragment).
extension Insert {
    /// The insert's statements: one, or one per batch of rows when they bind more values than
    /// `db` allows in a statement. `execute`, `fetchAll` and `fetchOne` run them all in one
    /// savepoint, so the insert stays all-or-nothing.
    public func checkedStatementFragments(for db: Database) throws -> [QueryFragment] {
        try batches(limit: db.maximumBindingCount).map(\.statementFragment)
    }

    /// The insert split so that no statement binds more than `limit` values; a single batch
    /// when it already fits (or when one row alone exceeds the limit: SQLite then reports it).
    func batches(limit: Int) throws -> [Self] {
        if let failure { throw failure }
        guard case .values(let rows) = source, rows.count > 1 else { return [self] }
        let reserved =
            conflictClauses.reduce(0) { $0 + $1.bindings.count }
            + returning.reduce(0) { $0 + $1.bindings.count }
        return bindingBatches(of: rows, limit: limit, reserved: reserved) { row in
            row.reduce(0) { $0 + $1.bindings.count }
        }
        .map { withRows(Array($0)) }
    }

    private func withRows(_ rows: [[QueryFragment]]) -> Self {
        var copy = self
        copy.source = .values(rows)
        return copy
    }
}
