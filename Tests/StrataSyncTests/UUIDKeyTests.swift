import Foundation
import StrataQueries
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Testing

/// A `let id: UUID` key syncs however its column is declared, as long as the column keeps text
/// as text; values that are not text are refused when written, naming the table and column.
@Suite(.timeLimit(.minutes(5))) struct UUIDKeyTests {
    @Table("notes") struct Note: Equatable, Identifiable {
        let id: UUID
        var body = ""
    }

    static let declarations = ["TEXT", "BLOB", "UUID", "", "VARCHAR(36)", "NUMERIC"]

    func schema(keyType: String) -> String {
        "CREATE TABLE notes (id \(keyType) PRIMARY KEY NOT NULL, body TEXT NOT NULL DEFAULT '')"
    }

    @Test(arguments: declarations)
    func aUUIDKeySyncsBetweenDevices(keyType: String) async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud, schema: schema(keyType: keyType), tables: ["notes"])
        let b = try await SyncTestDevice("b", cloud: cloud, schema: schema(keyType: keyType), tables: ["notes"])
        let note = Note(id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, body: "first")
        try await a.database.write { db in try Note.insert { note }.execute(db) }
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        let received = try await b.database.read { db in try Note.all.fetchAll(db) }
        #expect(received == [note])
        // The key stays text on the receiving side, as Swift wrote it on the sending one.
        #expect(try await b.strings("SELECT typeof(id) || ' ' || id FROM notes") == ["text e621e1f8-c36c-495a-93fc-0c247a3e6e5f"])
        // An edit made on B comes back to A through the same record.
        try await b.database.write { db in try Note.find(note.id).update { $0.body = "edited" }.execute(db) }
        try await b.engine.sendChanges()
        try await a.engine.fetchChanges()
        #expect(try await a.database.read { db in try Note.all.fetchAll(db) } == [Note(id: note.id, body: "edited")])
        let metadata = try await a.database.read { db in try SyncMetadata.find(note.syncMetadataID).fetchOne(db) }
        #expect(metadata?.recordName == "e621e1f8-c36c-495a-93fc-0c247a3e6e5f:notes")
    }

    @Test(arguments: ["BLOB", "UUID", ""])
    func aKeyThatIsNotTextIsRefusedWhenWritten(keyType: String) async throws {
        let device = try await SyncTestDevice("a", cloud: MockCloud(), schema: schema(keyType: keyType), tables: ["notes"])
        let expected = "synced table \"notes\": primary key \"id\" must hold text"
        for (sql, what) in [
            ("INSERT INTO notes (id) VALUES (randomblob(16))", "a 16-byte BLOB"),
            ("INSERT INTO notes (id) VALUES (42)", "an integer"),
            ("INSERT INTO notes (id) VALUES (1.5)", "a real"),
        ] {
            let error = await #expect(throws: DatabaseError.self, "\(what) in a \(keyType) key") {
                try await device.database.write { db in try db.execute(sql: sql) }
            }
            #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
        }
        // Rekeying to a non-text value is refused too; the row keeps its key.
        try await device.database.write { db in try db.execute(sql: "INSERT INTO notes (id) VALUES ('k1')") }
        await #expect(throws: DatabaseError.self) {
            try await device.database.write { db in try db.execute(sql: "UPDATE notes SET id = x'00' WHERE id = 'k1'") }
        }
        #expect(try await device.strings("SELECT id FROM notes") == ["k1"])
        #expect(try await device.pending() == 1)
    }

    @Test func aTextKeyColumnTakesNumbersAsText() async throws {
        // A TEXT column turns 42 into '42' itself: no guard, and the row syncs as "42:notes".
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud, schema: schema(keyType: "TEXT"), tables: ["notes"])
        try await a.execute("INSERT INTO notes (id, body) VALUES (42, 'n')")
        try await a.engine.sendChanges()
        let b = try await SyncTestDevice("b", cloud: cloud, schema: schema(keyType: "TEXT"), tables: ["notes"])
        try await b.engine.fetchChanges()
        #expect(try await b.strings("SELECT typeof(id) || ' ' || id FROM notes") == ["text 42"])
    }

    @Test(arguments: [("INTEGER", "INTEGER"), ("INT", "INT"), ("BIGINT", "BIGINT"), ("REAL", "REAL"), ("DOUBLE", "DOUBLE")])
    func integerAndRealKeysAreRefused(keyType: String, reported: String) async throws {
        let database = try DatabaseQueue()
        try await database.write { db in try db.execute(sql: schema(keyType: keyType)) }
        await #expect(throws: SyncSchemaError.primaryKeyNotText(table: "notes", column: "id", declaredType: reported)) {
            _ = try await runOnBackgroundThread {
                try SyncEngine(for: database, tableNames: ["notes"], container: MockCloud().container(user: "u"), startImmediately: false)
            }
        }
    }
}
