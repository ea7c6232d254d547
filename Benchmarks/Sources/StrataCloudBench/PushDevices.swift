import BenchSupport
import StrataSQLite
import StrataSync

/// The two devices of a push measurement, both holding `rows` synced rows: A (the phone)
/// commits and sends, B (the laptop) fetches.
struct PushDevices {
    let phone: (database: DatabasePool, engine: SyncEngine)
    let laptop: (database: DatabasePool, engine: SyncEngine)

    init(folder: String, container: any CloudContainer, rows: Int) async throws {
        phone = try await CloudSetup.device("phone", folder: folder, container: container)
        laptop = try await CloudSetup.device("laptop", folder: folder, container: container)
        // The zone exists on both sides, and both hold the rows, before the clock starts.
        try await phone.database.write { db in try StrataRowWriter.insert(0..<max(1, rows), key: "warm", in: db) }
        try await phone.engine.sendChanges()
        try await laptop.engine.fetchChanges()
    }

    /// Commits sample `key`'s row on A and sends it.
    func commitAndSend(_ key: String) async throws {
        try await phone.database.write { db in try StrataRowWriter.insert(0..<1, key: key, in: db) }
        try await phone.engine.sendChanges()
    }

    /// Whether sample `key`'s row is on B.
    func arrived(_ key: String) async throws -> Bool {
        try await laptop.database.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM projects WHERE id = ?", arguments: ["\(key)-0"]) == 1
        }
    }

    func close() {
        phone.database.close()
        laptop.database.close()
    }
}
