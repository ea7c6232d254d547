import CSQLite
import DependenciesTestSupport
import Foundation
import Strata
import Synchronization
import Testing

@Suite(
    "Seeding", .timeLimit(.minutes(5)),
    .dependencies {
        $0.uuid = .incrementing
        try $0.bootstrapDatabase()
    })
struct SeedTests {
    /// Runs `body` with every statement of the writer connection recorded.
    private func statements(_ database: any DatabaseWriter, _ body: @escaping @Sendable (Database) throws -> Void) throws -> [String] {
        let recorded = Mutex<[String]>([])
        try database.write { db in
            db.trace { event in recorded.withLock { $0.append(event.sql) } }
            defer { db.trace(nil) }
            try body(db)
        }
        return recorded.withLock { $0 }
    }

    @Test("consecutive records of one table become one multi-row INSERT")
    func oneInsertPerRun() throws {
        @Dependency(\.defaultDatabase) var database
        @Dependency(\.uuid) var uuid
        let tags = (0..<3).map { Tag(id: uuid(), itemID: 2, label: "tag \($0)") }
        let recorded = Mutex<SeedSummary?>(nil)
        let sql = try statements(database) { db in
            let summary = try db.seed {
                Item(id: 1, name: "one")
                Item(id: 2, name: "two")
                tags
                Item(id: 3, name: "three")
            }
            recorded.withLock { $0 = summary }
        }
        let inserts = sql.filter { $0.hasPrefix("INSERT") }
        #expect(inserts.count == 3)
        #expect(inserts.first?.contains("VALUES (?, ?), (?, ?) ON CONFLICT DO NOTHING") == true)
        #expect(inserts.dropFirst().first?.hasPrefix("INSERT INTO \"tags\"") == true)
        #expect(recorded.withLock { $0 } == SeedSummary(insertedCount: 6, skippedCount: 0, statementCount: 3))
        #expect(try database.read { db in try Item.fetchCount(db) } == 3)
        #expect(try database.read { db in try Tag.fetchCount(db) } == 3)
    }

    @Test("if, else, for and arrays all build records")
    func builderControlFlow() throws {
        @Dependency(\.defaultDatabase) var database
        let includeExtra = Bool.random()
        let summary = try database.write { db in
            try db.seed {
                for id in Int64(1)...3 {
                    Item(id: id, name: "item \(id)")
                }
                if includeExtra {
                    Item(id: 10, name: "extra")
                } else {
                    Item(id: 20, name: "other")
                }
                if !includeExtra {
                    Item(id: 30, name: "optional")
                }
            }
        }
        #expect(summary.insertedCount == (includeExtra ? 4 : 5))
        // All items are one run, whatever the branches produced.
        #expect(summary.statementCount == 1)
    }

    @Test("seeding the same records again inserts nothing and keeps the stored rows")
    func reseedIsIdempotent() throws {
        @Dependency(\.defaultDatabase) var database
        @Sendable func seed(_ db: Database) throws -> SeedSummary {
            // Each seed starts its own incrementing generator, as a preview's setup re-run does.
            try withDependencies {
                $0.uuid = .incrementing
            } operation: {
                @Dependency(\.uuid) var uuid
                return try db.seed {
                    Item(id: 1, name: "one")
                    Tag(id: uuid(), itemID: 1, label: "first")
                    Tag(id: uuid(), itemID: 1, label: "second")
                }
            }
        }
        let first = try database.write(seed)
        try database.write { db in try db.execute(sql: "UPDATE items SET name = 'edited' WHERE id = 1") }
        let second = try database.write(seed)
        #expect(first == SeedSummary(insertedCount: 3, skippedCount: 0, statementCount: 2))
        #expect(second == SeedSummary(insertedCount: 0, skippedCount: 3, statementCount: 2))
        let items = try database.read { db in try Item.fetchAll(db) }
        #expect(items == [Item(id: 1, name: "edited")])
        #expect(try database.read { db in try Tag.fetchCount(db) } == 2)
    }

    @Test("only uniqueness conflicts are skipped: NOT NULL violations throw and roll back")
    func otherConstraintsThrow() throws {
        @Dependency(\.defaultDatabase) var database
        #expect(throws: DatabaseError.self) {
            try database.write { db in
                try db.seed {
                    Item(id: 1, name: "one")
                    Tag(id: UUID(), itemID: 1, label: nil)
                }
            }
        }
        #expect(try database.read { db in try Item.fetchCount(db) } == 0)
    }

    @Test("a run larger than SQLite's parameter limit is split into several statements")
    func largeRun() throws {
        @Dependency(\.defaultDatabase) var database
        let summary = try database.write { db in
            // 10 parameters per statement: 5 items of 2 columns.
            sqlite3_limit(db.handle, SQLITE_LIMIT_VARIABLE_NUMBER, 10)
            defer { sqlite3_limit(db.handle, SQLITE_LIMIT_VARIABLE_NUMBER, 32766) }
            return try db.seed {
                (Int64(1)...12).map { Item(id: $0, name: "item \($0)") }
            }
        }
        #expect(summary == SeedSummary(insertedCount: 12, skippedCount: 0, statementCount: 3))
    }

    @Test("IDs from the uuid dependency are the same on every run")
    func deterministicIDs() throws {
        func seededIDs() throws -> [UUID] {
            try withDependencies {
                $0.uuid = .incrementing
                try $0.bootstrapDatabase()
            } operation: {
                @Dependency(\.defaultDatabase) var database
                @Dependency(\.uuid) var uuid
                try database.write { db in
                    try db.seed {
                        Item(id: 1, name: "one")
                        Tag(id: uuid(), itemID: 1, label: "a")
                        Tag(id: uuid(), itemID: 1, label: "b")
                    }
                }
                return try database.read { db in try Tag.fetchAll(db).map(\.id) }
            }
        }
        let first = try seededIDs()
        #expect(first == (try seededIDs()))
        #expect(first.first == UUID(0))
    }
}
