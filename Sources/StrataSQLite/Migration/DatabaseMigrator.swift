/// Applies named schema migrations once each, in the order they were registered.
///
/// ```swift
/// var migrator = DatabaseMigrator()
/// #if DEBUG
/// migrator.eraseDatabaseOnSchemaChange = true
/// #endif
/// migrator.registerMigration("Create games and players") { db in
///     try db.execute(sql: """
///         CREATE TABLE games (id INTEGER PRIMARY KEY, title TEXT NOT NULL);
///         CREATE TABLE players (id INTEGER PRIMARY KEY, gameID INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
///         """)
/// }
/// try migrator.migrate(pool)
/// ```
///
/// Each migration runs in its own `IMMEDIATE` transaction, with foreign key enforcement
/// turned off so tables can be rebuilt, and `PRAGMA foreign_key_check` run before the commit:
/// a migration that leaves a dangling reference is rolled back with a
/// ``ForeignKeyViolationError``. Applied migrations are recorded in the `strata_migrations`
/// table. Migrations run under a barrier: no read runs while the schema changes.
public struct DatabaseMigrator: Sendable {
    struct Migration: Sendable {
        var identifier: String
        var migrate: @Sendable (Database) throws -> Void
    }

    /// When true, a database whose schema differs from what its applied migrations would
    /// produce (because a migration was edited during development), or that records a
    /// migration this migrator does not know, is erased and migrated from scratch.
    ///
    /// Never enable it in a shipping app: erasing deletes the user's data.
    ///
    /// Only the `main` schema is compared and erased. Attached databases (a sync
    /// metadatabase, say) are left alone: their owners migrate them. The comparison migrates a
    /// scratch in-memory connection whose role is ``ConnectionRole/migrationReference``;
    /// ``Configuration/prepareDatabase(_:)`` closures run there too (a migration may call
    /// their SQL functions), and ``Database/attach(path:as:)`` attaches an empty in-memory
    /// database there instead of the file.
    public var eraseDatabaseOnSchemaChange = false

    private(set) var migrations: [Migration] = []

    /// The table recording applied migrations.
    public static let migrationsTableName = "strata_migrations"

    /// An empty migrator: register migrations in the order they must run.
    public init() {}

    /// Registers a migration. Identifiers must be unique; registering one twice is a
    /// programmer error reported when migrating.
    public mutating func registerMigration(_ identifier: String, migrate: @escaping @Sendable (Database) throws -> Void) {
        migrations.append(Migration(identifier: identifier, migrate: migrate))
    }

    /// The identifiers of registered migrations, in order.
    public var migrationIdentifiers: [String] { migrations.map(\.identifier) }

    /// Applies every migration not applied yet, blocking the calling thread.
    public func migrate(_ writer: some DatabaseWriter, upTo target: String? = nil) throws {
        try writer.barrierWriteWithoutTransaction { db in
            try self.migrate(db, upTo: target)
        }
    }

    /// Applies every migration not applied yet.
    public func migrate(_ writer: some DatabaseWriter, upTo target: String? = nil) async throws {
        try await writer.barrierWriteWithoutTransaction { db in
            try self.migrate(db, upTo: target)
        }
    }

    /// The identifiers of the migrations applied to a database, in the order they were applied.
    public func appliedIdentifiers(_ db: Database) throws -> [String] {
        guard try db.tableExists(Self.migrationsTableName) else { return [] }
        return try String.fetchAll(db, sql: "SELECT identifier FROM \(Self.migrationsTableName.quotedIdentifier) ORDER BY rowid")
    }

    /// Whether every registered migration has been applied.
    public func hasCompletedMigrations(_ db: Database) throws -> Bool {
        Set(try appliedIdentifiers(db)).isSuperset(of: migrationIdentifiers)
    }

    // MARK: - Applying

    func migrate(_ db: Database, upTo target: String?) throws {
        try validateIdentifiers(target: target)
        if db.isInsideTransaction {
            throw DatabaseError(
                resultCode: .misuse,
                message: "migrations cannot run inside a transaction; use writeWithoutTransaction or the migrate(_:) methods")
        }
        try db.execute(
            sql: "CREATE TABLE IF NOT EXISTS \(Self.migrationsTableName.quotedIdentifier) (identifier TEXT NOT NULL PRIMARY KEY)")
        var applied = try appliedIdentifiers(db)
        if eraseDatabaseOnSchemaChange, try schemaChanged(db, applied: applied) {
            try db.eraseSchema()
            try db.execute(
                sql: "CREATE TABLE IF NOT EXISTS \(Self.migrationsTableName.quotedIdentifier) (identifier TEXT NOT NULL PRIMARY KEY)")
            applied = []
        }
        let appliedSet = Set(applied)
        for migration in migrations {
            if !appliedSet.contains(migration.identifier) {
                try apply(migration, to: db)
            }
            if migration.identifier == target { break }
        }
    }

    private func apply(_ migration: Migration, to db: Database) throws {
        let enforcesForeignKeys = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false
        // PRAGMA foreign_keys is a no-op inside a transaction, so it is switched off before
        // BEGIN: a migration that rebuilds a table (create new, copy, drop old, rename) would
        // otherwise cascade deletes or fail half-way.
        if enforcesForeignKeys { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
        // Restored even when the migration was cancelled, which stops ordinary statements.
        defer { if enforcesForeignKeys { try? db.executeIgnoringCancellation(sql: "PRAGMA foreign_keys = ON") } }
        do {
            try db.inTransaction(.immediate) {
                try db.runMigrationHooksBefore()
                try migration.migrate(db)
                try db.runMigrationHooksAfter()
                if enforcesForeignKeys, let violation = try ForeignKeyViolationError.first(in: db) {
                    throw violation
                }
                try db.execute(
                    sql: "INSERT INTO \(Self.migrationsTableName.quotedIdentifier) (identifier) VALUES (?)",
                    arguments: [migration.identifier])
                return .commit
            }
        } catch {
            throw MigrationError(identifier: migration.identifier, underlying: error)
        }
    }

    private func validateIdentifiers(target: String?) throws {
        var seen = Set<String>()
        for migration in migrations where !seen.insert(migration.identifier).inserted {
            throw DatabaseError(resultCode: .misuse, message: "migration \"\(migration.identifier)\" is registered twice")
        }
        if let target, !seen.contains(target) {
            throw DatabaseError(resultCode: .misuse, message: "no migration named \"\(target)\" is registered")
        }
    }

    /// Whether the database records an unknown migration, or its schema differs from a fresh
    /// in-memory database with the same migrations applied.
    private func schemaChanged(_ db: Database, applied: [String]) throws -> Bool {
        guard !applied.isEmpty else { return false }
        let known = Set(migrationIdentifiers)
        if applied.contains(where: { !known.contains($0) }) { return true }
        let reference = try Database(location: .privateMemory, configuration: db.configuration, readOnly: false, role: .migrationReference)
        defer { reference.close() }
        for prepare in db.configuration.preparations {
            try prepare(reference)
        }
        var referenceMigrator = DatabaseMigrator()
        let appliedSet = Set(applied)
        referenceMigrator.migrations = migrations.filter { appliedSet.contains($0.identifier) }
        try referenceMigrator.migrate(reference, upTo: nil)
        return try db.schemaSignature() != reference.schemaSignature()
    }
}
