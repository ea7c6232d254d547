import StrataSQLite

// "Too many SQL variables": SQLite refuses a statement that binds more values than
// SQLITE_LIMIT_VARIABLE_NUMBER (32,766 by default), which a multi-row VALUES of a few thousand
// records reaches. Running such an insert splits its rows into several statements, inside one
// savepoint so the insert stays all-or-nothing.
extension Insert {
    /// Runs the insert. Rows beyond what one statement can bind are written by several
    /// statements in one savepoint: all of them are inserted, or none.
    public func execute(_ db: Database) throws {
        let batches = try self.batches(limit: db.maximumBindingCount)
        if batches.count <= 1 { return try executeStatement(self, db) }
        try db.savepoint {
            for batch in batches { try executeStatement(batch, db) }
        }
    }

    /// The rows of `RETURNING`, in insertion order, however many statements the insert needs.
    public func fetchAll(_ db: Database) throws -> [Returning] where Returning: QueryDecodable {
        let batches = try self.batches(limit: db.maximumBindingCount)
        if batches.count <= 1 { return try fetchAllOfStatement(self, db) }
        return try db.savepoint {
            try batches.flatMap { try fetchAllOfStatement($0, db) }
        }
    }

    /// The insert split so that no statement binds more than `limit` values; a single batch
    /// when it already fits (or when one row alone exceeds the limit: SQLite then reports it).
    func batches(limit: Int) throws -> [Self] {
        if let failure { throw failure }
        guard case .values(let rows) = source, rows.count > 1 else { return [self] }
        let conflictBindings = conflictClauses.reduce(0) { $0 + $1.bindings.count }
            + returning.reduce(0) { $0 + $1.bindings.count }
        let budget = Swift.max(1, limit - conflictBindings)
        var batches: [Self] = []
        var current: [[QueryFragment]] = []
        var currentCount = 0
        for row in rows {
            let count = row.reduce(0) { $0 + $1.bindings.count }
            if !current.isEmpty, currentCount + count > budget {
                batches.append(withRows(current))
                current = []
                currentCount = 0
            }
            current.append(row)
            currentCount += count
        }
        if !current.isEmpty { batches.append(withRows(current)) }
        return batches
    }

    private func withRows(_ rows: [[QueryFragment]]) -> Self {
        var copy = self
        copy.source = .values(rows)
        return copy
    }
}

/// The protocol's `execute`, not `Insert`'s batching one.
private func executeStatement(_ statement: some QueryStatement, _ db: Database) throws {
    try statement.execute(db)
}

/// The protocol's `fetchAll`, not `Insert`'s batching one.
private func fetchAllOfStatement<Statement: QueryStatement>(_ statement: Statement, _ db: Database) throws -> [Statement.QueryValue]
where Statement.QueryValue: QueryDecodable {
    try statement.fetchAll(db)
}
