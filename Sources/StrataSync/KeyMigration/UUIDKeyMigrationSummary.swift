/// What `Database.migrateIntegerPrimaryKeysToUUIDs(tables:uuid:)` changed.
public struct UUIDKeyMigrationSummary: Sendable, Hashable {
    /// A foreign key column whose values now hold its parent's UUIDs.
    public struct ForeignKeyColumn: Sendable, Hashable {
        /// The table holding the column.
        public var table: String
        /// The column.
        public var column: String
        /// The migrated table it references.
        public var parentTable: String
    }

    /// A table whose primary key became UUID text.
    public struct MigratedTable: Sendable, Hashable {
        /// The table, as the schema spells it.
        public var table: String
        /// The primary key column.
        public var column: String
        /// The rows that received a UUID.
        public var rows: Int
    }

    /// The migrated tables, in the order given.
    public var migratedTables: [MigratedTable]
    /// Every foreign key column that followed a migrated key, in any table.
    public var foreignKeyColumns: [ForeignKeyColumn]
    /// Every table rebuilt: the migrated ones, those holding a following column, and those
    /// referencing a rebuilt table (rebuilt unchanged, so that no reference ever points at a
    /// dropped table). Children first.
    public var rebuiltTables: [String]
}
