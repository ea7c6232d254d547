extension Database {
    /// Runs `before` and `after` around every migration that ``DatabaseMigrator`` applies on
    /// this connection, inside the migration's transaction.
    ///
    /// For schema objects a library derives from the user's tables (the sync engine's capture
    /// triggers name every column): `before` removes them, so a migration may drop or rename
    /// columns that they name, and `after` builds them again for the schema the migration left,
    /// in the same transaction, so no write is ever made between a migration and the rebuild.
    /// Setting a hook for an `owner` that already has one replaces it.
    package func setMigrationHook(
        _ owner: String, before: @escaping (Database) throws -> Void, after: @escaping (Database) throws -> Void
    ) {
        migrationHooks.removeAll { $0.owner == owner }
        migrationHooks.append((owner, before, after))
    }

    func runMigrationHooksBefore() throws {
        for hook in migrationHooks { try hook.before(self) }
    }

    func runMigrationHooksAfter() throws {
        for hook in migrationHooks { try hook.after(self) }
    }
}
