import StrataSQLite

extension Select {
    /// The key of a bare `find(id)`: a select of every column of the table with the key as its
    /// only clause. Nil for anything else, which then runs as built.
    @inlinable
    var bareKeyLookup: DatabaseValue? {
        guard let primaryKeyLookup, chosenSelection == nil, otherWheres.isEmpty, !isDistinct, joins.isEmpty,
            groups.isEmpty, havings.isEmpty, orders.isEmpty, limit == nil, offset == nil
        else { return nil }
        return primaryKeyLookup.key
    }
}

extension Select where Columns == From {
    /// The first row, or nil.
    ///
    /// `Player.find(id).fetchOne(db)` — the most common read of all — runs the table's
    /// prepared by-key statement (`TableRecord.fetchOne(_:id:)`), the same SQL
    /// with the key bound in place, instead of building the select's text and finding its
    /// statement by that text on every call. Any other select runs as built.
    @inlinable
    public func fetchOne(_ db: Database) throws -> From? {
        if let key = bareKeyLookup {
            return try From.fetchOne(db, id: key)
        }
        return try fetchFirstBuilt(self, db)
    }
}

/// The protocol's `fetchOne`, which a method of `Select` with the same name would otherwise
/// shadow.
@inlinable
func fetchFirstBuilt<Statement: QueryStatement>(_ statement: Statement, _ db: Database) throws -> Statement.QueryValue?
where Statement.QueryValue: QueryDecodable {
    try statement.fetchOne(db)
}
