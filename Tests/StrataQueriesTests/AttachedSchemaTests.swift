import StrataQueries
import StrataSQLite
import Testing

// Tables of an attached database, as the sync engine keeps them: `"sync"."metadata"`. The main
// database has a `metadata` table too, so a statement that forgot the schema would read or
// write the wrong one.
@Table("metadata") struct SyncMetadata: Identifiable, Equatable {
    let id: Int
    var entity = ""
    var version = 0
}

extension SyncMetadata {
    static var schemaName: String? { "sync" }
}

@Table("counters") struct SyncCounter: Identifiable, Equatable {
    let id: Int
    var inserts = 0
}

extension SyncCounter {
    static var schemaName: String? { "sync" }
}

@Table("entities") struct SyncedEntity: Identifiable, Equatable {
    let id: Int
    var name = ""
}

func makeAttachedDatabase() throws -> DatabaseQueue {
    let db = try DatabaseQueue()
    try db.writeWithoutTransaction { db in
        try db.attach(path: ":memory:", as: "sync")
        try db.execute(
            sql: """
                CREATE TABLE main.metadata (id INTEGER PRIMARY KEY, entity TEXT NOT NULL, version INTEGER NOT NULL);
                INSERT INTO main.metadata VALUES (1, 'main only', 100);
                CREATE TABLE main.entities (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                INSERT INTO main.entities VALUES (1, 'Ann'), (2, 'Bob');
                CREATE TABLE sync.metadata (id INTEGER PRIMARY KEY, entity TEXT NOT NULL, version INTEGER NOT NULL);
                CREATE TABLE sync.counters (id INTEGER PRIMARY KEY, inserts INTEGER NOT NULL);
                INSERT INTO sync.counters VALUES (1, 0);
                """)
    }
    return db
}

@Suite(.timeLimit(.minutes(5))) struct AttachedSchemaTests {
    @Test func statementsNameTheSchema() {
        #expect(SyncMetadata.all.sql == #"SELECT "metadata"."id", "metadata"."entity", "metadata"."version" FROM "sync"."metadata""#)
        #expect(SyncMetadata.delete().sql == #"DELETE FROM "sync"."metadata""#)
        #expect(SyncMetadata.update { $0.version += 1 }.sql.hasPrefix(#"UPDATE "sync"."metadata" SET"#))
        #expect(SyncMetadata.insert { SyncMetadata(id: 1, entity: "a", version: 1) }.sql.hasPrefix(#"INSERT INTO "sync"."metadata""#))
    }

    @Test func insertSelectUpdateDeleteReachTheAttachedTable() throws {
        let db = try makeAttachedDatabase()
        try db.write { db in
            try SyncMetadata.insert {
                SyncMetadata(id: 1, entity: "entities", version: 1)
                SyncMetadata(id: 2, entity: "games", version: 1)
            }.execute(db)
            try SyncMetadata.where { $0.entity.eq("games") }.update { $0.version += 1 }.execute(db)
            try SyncMetadata.update(SyncMetadata(id: 1, entity: "entities", version: 5)).execute(db)
            try SyncMetadata.find(2).delete().execute(db)
        }
        let rows = try db.read { try SyncMetadata.order(by: \.id).fetchAll($0) }
        #expect(rows == [SyncMetadata(id: 1, entity: "entities", version: 5)])
        // The record API of the lower layer names the schema too.
        try db.write { db in try SyncMetadata(id: 3, entity: "tags", version: 1).insert(db) }
        #expect(try db.read { try SyncMetadata.fetchCount($0) } == 2)
        let untouched = try db.read { try String.fetchAll($0, sql: "SELECT entity FROM main.metadata") }
        #expect(untouched == ["main only"])
    }

    @Test func joinsAnAttachedTableToAMainOne() throws {
        let db = try makeAttachedDatabase()
        try db.write { db in
            try SyncMetadata.insert { SyncMetadata(id: 1, entity: "entities", version: 7) }.execute(db)
        }
        let query = SyncedEntity.join(SyncMetadata.all) { $1.entity.eq("entities") }
            .order(by: \.id)
            .select { ($0.name, $1.version) }
        #expect(query.sql.contains(#"FROM "entities" JOIN "sync"."metadata" ON"#))
        let rows = try db.read { try query.fetchAll($0) }
        #expect(rows.map(\.0) == ["Ann", "Bob"])
        #expect(rows.map(\.1) == [7, 7])
    }

    @Test func temporaryTriggerOnAnAttachedTable() throws {
        let db = try makeAttachedDatabase()
        let trigger = SyncMetadata.createTemporaryTrigger("countInserts", after: .insert) { _ in
            SyncCounter.find(1).update { $0.inserts += 1 }
        }
        // SQLite refuses a schema on the table a trigger step writes: the step names it alone.
        #expect(
            trigger.sql.hasPrefix(
                #"CREATE TEMPORARY TRIGGER "countInserts" AFTER INSERT ON "sync"."metadata" FOR EACH ROW BEGIN UPDATE "counters" SET"#))
        try db.writeWithoutTransaction { db in
            try trigger.execute(db)
            try SyncMetadata.insert {
                SyncMetadata(id: 1, entity: "entities", version: 1)
                SyncMetadata(id: 2, entity: "games", version: 1)
            }.execute(db)
            // An insert into main's table of the same name does not fire it.
            try db.execute(sql: "INSERT INTO main.metadata VALUES (2, 'other', 1)")
        }
        #expect(try db.read { try SyncCounter.find(1).select(\.inserts).fetchOne($0) } == 2)
    }
}
