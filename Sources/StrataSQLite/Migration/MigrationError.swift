/// A migration failed; the database is left as it was before that migration.
public struct MigrationError: Error, CustomStringConvertible {
    /// The failed migration's identifier.
    public var identifier: String
    /// The error the migration threw, or the foreign key violation it left.
    public var underlying: any Error

    /// The failed migration and its error.
    public var description: String {
        "migration \"\(identifier)\" failed: \(underlying)"
    }
}
