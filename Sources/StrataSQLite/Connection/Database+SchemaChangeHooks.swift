extension Database {
    /// Runs `body` at the start of a write access (`write`, `writeWithoutTransaction`,
    /// `barrierWriteWithoutTransaction`) on this connection whenever the schema changed since
    /// the hooks last looked, whoever changed it: another connection, another process, a
    /// program that does not use Strata.
    ///
    /// For schema objects a library derives from the user's tables, which a schema change
    /// made elsewhere can remove or leave stale (the sync engine's capture triggers go with a
    /// table another program rebuilds): the next write through this connection finds them
    /// mended first. The check costs one `PRAGMA schema_version` per write access, on
    /// connections that set a hook only. Setting a hook for an `owner` that already has one
    /// replaces it.
    /// The first write access after the hook is set runs it in any case: what it mends may
    /// have broken before this connection opened.
    package func setSchemaChangeHook(_ owner: String, _ body: @escaping (Database) throws -> Void) {
        schemaChangeHooks.removeAll { $0.owner == owner }
        schemaChangeHooks.append((owner, body))
        hookedSchemaVersion = -1
    }

    /// Runs the schema change hooks when `access` writes and the schema changed.
    func runSchemaChangeHooks(before access: AccessKind) throws {
        guard !schemaChangeHooks.isEmpty, access.isWrite else { return }
        let version = try currentSchemaVersion()
        guard version != hookedSchemaVersion else { return }
        hookedSchemaVersion = version
        for hook in schemaChangeHooks { try hook.body(self) }
        // What the hooks changed themselves is not a change to look at again.
        hookedSchemaVersion = try currentSchemaVersion()
    }

    private func currentSchemaVersion() throws -> Int64 {
        try Int64.fetchOne(self, sql: "PRAGMA schema_version") ?? 0
    }
}

extension AccessKind {
    /// Whether the access may write.
    var isWrite: Bool {
        switch self {
        case .write, .writeWithoutTransaction, .barrierWriteWithoutTransaction: true
        case .opening, .read, .asyncRead, .readAfterCommit: false
        }
    }
}
