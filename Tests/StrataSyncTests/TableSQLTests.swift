import StrataSQLite
import Testing

@testable import StrataSync

/// The per-table statements are written once, and follow every change of the properties they
/// are written from.
@Suite(.timeLimit(.minutes(1)))
struct TableSQLTests {
    static func table(in queue: DatabaseQueue) async throws -> SyncedTable {
        try await queue.write { db in
            try db.execute(
                sql: #"""
                    CREATE TABLE "odd ""name""" ("the key" TEXT PRIMARY KEY NOT NULL, "a""b" TEXT, "parent" TEXT REFERENCES "odd ""name""" ("the key"));
                    INSERT INTO "odd ""name""" VALUES ('k', 'v', NULL), ('child', 'w', 'k');
                    """#)
            return try SyncedTable.read("odd \"name\"", in: db)
        }
    }

    @Test func quotedNamesReadTheRow() async throws {
        let queue = try DatabaseQueue()
        let table = try await Self.table(in: queue)
        #expect(table.valueColumns == ["a\"b", "parent"])
        #expect(table.sql.parentValueIndex == 1)
        let (values, exists, missing, parentKey) = try await queue.read { db in
            (
                try IncomingChanges.localValues(of: RecordName(table: table.name, primaryKey: "child"), table: table, in: db),
                try Int.fetchOne(db, sql: table.sql.selectExists, arguments: ["k"]),
                try Int.fetchOne(db, sql: table.sql.selectExists, arguments: ["nope"]),
                try String.fetchOne(db, sql: try #require(table.sql.selectParentKeyText), arguments: ["child"])
            )
        }
        #expect(values == [.text("w"), .text("k")])
        #expect(exists == 1)
        #expect(missing == nil)
        #expect(parentKey == "k")
    }

    @Test func changedPropertiesRewriteTheStatements() async throws {
        let queue = try DatabaseQueue()
        var table = try await Self.table(in: queue)
        let before = table.sql
        table.columns.removeAll { $0.name == "a\"b" }
        #expect(table.valueColumns == ["parent"])
        #expect(table.sql.parentValueIndex == 0)
        #expect(table.sql != before)
        let selectValues = table.sql.selectValues
        #expect(try await queue.read { db in try String.fetchOne(db, sql: selectValues, arguments: ["child"]) } == "k")
        table.parent = nil
        #expect(table.sql.selectParentKeyText == nil)
        #expect(table.sql.parentValueIndex == nil)
        table.primaryKey = "parent"
        #expect(table.valueColumns == ["the key"])
        table.name = "other"
        #expect(table.sql.selectExists.contains("main.\"other\""))
    }
}
