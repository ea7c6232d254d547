import StrataSQLite

// `Player.find(id).fetchOne(db)` in a loop: building the statement's SQL and hashing it into
// the statement cache cost more than the lookup itself (1.9x the C API, against 1.11x for the
// record API's per-type prepared statement). A select that is still exactly a key lookup —
// every column, one condition on the key, nothing else — runs the record statement instead.
extension Select where Columns == From, Joins == (), From: PrimaryKeyedTable {
    /// The first row, or nil. An unchanged `find(value)` reads through the table's prepared
    /// record statement; the SQL and the result are the same.
    public func fetchOne(_ db: Database) throws -> From? {
        if let key = keyLookup, isPlainKeyLookup {
            return try From.fetchOne(db, id: key)
        }
        return try fetchFirst(of: self, db)
    }

    private var isPlainKeyLookup: Bool {
        wheres.count == 1 && joins.isEmpty && groups.isEmpty && havings.isEmpty && orders.isEmpty
            && limit == nil && offset == nil && !isDistinct
    }
}

/// The protocol's `fetchOne`, not the key-lookup one.
private func fetchFirst<Statement: QueryStatement>(of statement: Statement, _ db: Database) throws -> Statement.QueryValue?
where Statement.QueryValue: QueryDecodable {
    try statement.fetchOne(db)
}
