import Foundation
import StrataSQLite
import Testing

/// A record written by hand, columns by index.
struct Player: TableRecord, Equatable {
    static let tableName = "players"
    static let columnNames = ["id", "teamID", "name", "score"]
    var id: Int64?
    var teamID: Int64?
    var name: String
    var score: Int

    init(id: Int64? = nil, teamID: Int64? = nil, name: String, score: Int = 0) {
        self.id = id
        self.teamID = teamID
        self.name = name
        self.score = score
    }

    init(row: Row) throws {
        id = try row[0]
        teamID = try row[1]
        name = try row[2]
        score = try row[3]
    }

    func encodeColumns(to columns: inout ColumnEncoder) throws {
        columns.append(id)
        columns.append(teamID)
        columns.append(name)
        columns.append(score)
    }
}

struct Team: TableRecord, Equatable {
    static let tableName = "teams"
    static let columnNames = ["id", "name"]
    var id: Int64
    var name: String

    init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }

    init(row: Row) throws {
        id = try row[0]
        name = try row[1]
    }

    func encodeColumns(to columns: inout ColumnEncoder) throws {
        columns.append(id)
        columns.append(name)
    }
}

/// A composite primary key whose columns are not the first ones.
struct Membership: TableRecord, Equatable {
    static let tableName = "memberships"
    static let columnNames = ["role", "groupID", "userID"]
    static let primaryKeyColumnNames = ["groupID", "userID"]
    var role: String
    var groupID: Int
    var userID: Int

    init(role: String, groupID: Int, userID: Int) {
        self.role = role
        self.groupID = groupID
        self.userID = userID
    }

    init(row: Row) throws {
        role = try row[0]
        groupID = try row[1]
        userID = try row[2]
    }

    func encodeColumns(to columns: inout ColumnEncoder) throws {
        columns.append(role)
        columns.append(groupID)
        columns.append(userID)
    }
}

func makeRecordQueue() throws -> DatabaseQueue {
    let queue = try DatabaseQueue()
    try queue.write { db in
        try db.execute(
            sql: """
                CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE players (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    teamID INTEGER REFERENCES teams(id) ON DELETE CASCADE,
                    name TEXT NOT NULL UNIQUE,
                    score INTEGER NOT NULL DEFAULT 0
                );
                CREATE TABLE memberships (
                    role TEXT NOT NULL,
                    groupID INTEGER NOT NULL,
                    userID INTEGER NOT NULL,
                    PRIMARY KEY (groupID, userID)
                );
                """)
    }
    return queue
}

@Suite(.timeLimit(.minutes(5))) struct RecordTests {
    @Test func insertAndFetch() throws {
        let queue = try makeRecordQueue()
        try queue.write { db in
            try Player(id: 1, name: "Ann", score: 10).insert(db)
            try Player(id: 2, name: "Bob", score: 20).insert(db)
            #expect(try Player.fetchAll(db) == [Player(id: 1, name: "Ann", score: 10), Player(id: 2, name: "Bob", score: 20)])
            #expect(try Player.fetchCount(db) == 2)
            #expect(try Player.fetchOne(db, id: 2) == Player(id: 2, name: "Bob", score: 20))
            #expect(try Player.fetchOne(db, id: 3) == nil)
            #expect(try Player.find(db, id: 1).name == "Ann")
        }
    }

    @Test func insertedReturnsAutoincrementedID() throws {
        let queue = try makeRecordQueue()
        try queue.write { db in
            let first = try Player(name: "Ann", score: 3).inserted(db)
            let second = try Player(name: "Bob").inserted(db)
            #expect(first.id == 1)
            #expect(second.id == 2)
            #expect(first == Player(id: 1, name: "Ann", score: 3))
            #expect(db.lastInsertedRowID == 2)
            #expect(try Player.find(db, id: 2) == second)
        }
    }

    @Test func insertConflictThrowsWithArguments() throws {
        let queue = try makeRecordQueue()
        try queue.write { db in
            try Player(id: 1, name: "Ann").insert(db)
            let error = #expect(throws: DatabaseError.self) { try Player(id: 2, name: "Ann", score: 5).insert(db) }
            #expect(error?.extendedResultCode == .constraintUnique)
            #expect(error?.description.contains("[2, NULL, 'Ann', 5]") == true)
            #expect(error?.sql?.hasPrefix("INSERT INTO \"players\"") == true)
            // INSERT OR IGNORE / REPLACE.
            try Player(id: 2, name: "Ann", score: 5).insert(db, onConflict: .ignore)
            #expect(try Player.fetchCount(db) == 1)
            try Player(id: 2, name: "Ann", score: 5).insert(db, onConflict: .replace)
            #expect(try Player.fetchAll(db) == [Player(id: 2, name: "Ann", score: 5)])
        }
    }

    @Test func upsertInsertsThenUpdates() throws {
        let queue = try makeRecordQueue()
        try queue.write { db in
            try Player(id: 1, name: "Ann", score: 1).upsert(db)
            #expect(try Player.find(db, id: 1).score == 1)
            try Player(id: 1, name: "Annie", score: 9).upsert(db)
            #expect(try Player.fetchAll(db) == [Player(id: 1, name: "Annie", score: 9)])
            // A key-only table upserts with DO NOTHING.
            try db.execute(sql: "CREATE TABLE tags (id INTEGER PRIMARY KEY)")
            struct Tag: TableRecord {
                static let tableName = "tags"
                static let columnNames = ["id"]
                var id: Int
                init(id: Int) { self.id = id }
                init(row: Row) throws { id = try row[0] }
                func encodeColumns(to columns: inout ColumnEncoder) throws { columns.append(id) }
            }
            try Tag(id: 1).upsert(db)
            try Tag(id: 1).upsert(db)
            #expect(try Tag.fetchCount(db) == 1)
            try Tag(id: 1).update(db)
            #expect(throws: RecordNotFoundError.self) { try Tag(id: 2).update(db) }
        }
    }

    @Test func updateChangesTheRowOrThrowsWhenMissing() throws {
        let queue = try makeRecordQueue()
        try queue.write { db in
            var player = try Player(name: "Ann").inserted(db)
            player.score = 42
            try player.update(db)
            #expect(try Player.find(db, id: player.id).score == 42)
            let missing = Player(id: 99, name: "Ghost")
            let error = #expect(throws: RecordNotFoundError.self) { try missing.update(db) }
            #expect(error?.tableName == "players")
            #expect(error?.key == [.integer(99)])
            #expect(error?.description == "no row in \"players\" with primary key 99")
        }
    }

    @Test func deleteAndExists() throws {
        let queue = try makeRecordQueue()
        try queue.write { db in
            let ann = try Player(name: "Ann").inserted(db)
            let bob = try Player(name: "Bob").inserted(db)
            #expect(try ann.exists(db))
            #expect(try ann.delete(db))
            #expect(try !ann.exists(db))
            #expect(try !ann.delete(db))
            #expect(try Player.fetchAll(db) == [bob])
            #expect(try Player.deleteOne(db, id: bob.id))
            #expect(try !Player.deleteOne(db, id: bob.id))
            #expect(try Player.fetchCount(db) == 0)
        }
    }

    @Test func findThrowsWhenMissing() throws {
        let queue = try makeRecordQueue()
        let error = #expect(throws: RecordNotFoundError.self) {
            try queue.read { db in try Player.find(db, id: 7) }
        }
        #expect(error?.key == [.integer(7)])
    }

    @Test func deleteAllReturnsTheCount() throws {
        let queue = try makeRecordQueue()
        try queue.write { db in
            for name in ["a", "b", "c"] { try Player(name: name).insert(db) }
            #expect(try Player.deleteAll(db) == 3)
            #expect(try Player.fetchCount(db) == 0)
            #expect(try Player.deleteAll(db) == 0)
        }
    }

    @Test func compositePrimaryKey() throws {
        let queue = try makeRecordQueue()
        try queue.write { db in
            try Membership(role: "admin", groupID: 1, userID: 10).insert(db)
            try Membership(role: "member", groupID: 1, userID: 11).insert(db)
            try Membership(role: "member", groupID: 2, userID: 10).insert(db)
            #expect(try Membership.fetchOne(db, key: [1, 11]) == Membership(role: "member", groupID: 1, userID: 11))
            #expect(try Membership.fetchOne(db, key: [2, 11]) == nil)
            #expect(throws: DatabaseError.self) { try Membership.fetchOne(db, key: [1]) }

            var membership = Membership(role: "owner", groupID: 2, userID: 10)
            try membership.update(db)
            #expect(try Membership.fetchOne(db, key: [2, 10])?.role == "owner")
            membership.userID = 99
            let error = #expect(throws: RecordNotFoundError.self) { try membership.update(db) }
            #expect(error?.key == [.integer(2), .integer(99)])

            try Membership(role: "guest", groupID: 1, userID: 11).upsert(db)
            #expect(try Membership.fetchOne(db, key: [1, 11])?.role == "guest")
            #expect(try Membership(role: "", groupID: 1, userID: 10).exists(db))
            #expect(try Membership(role: "", groupID: 1, userID: 10).delete(db))
            #expect(try Membership.fetchCount(db) == 2)
            #expect(throws: DatabaseError.self) { try Membership(role: "x", groupID: 1, userID: 11).insert(db) }
        }
    }

    @Test func foreignKeysAreEnforcedByDefault() throws {
        let queue = try makeRecordQueue()
        try queue.write { db in
            #expect(try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") == true)
            try Team(id: 1, name: "Red").insert(db)
            try Team(id: 2, name: "Blue").insert(db)
            try Player(teamID: 1, name: "Ann").insert(db)
            try Player(teamID: 1, name: "Bob").insert(db)
            try Player(teamID: 2, name: "Cid").insert(db)
            let error = #expect(throws: DatabaseError.self) { try Player(teamID: 3, name: "Dan").insert(db) }
            #expect(error?.extendedResultCode == .constraintForeignKey)
            // ON DELETE CASCADE.
            #expect(try Team(id: 1, name: "Red").delete(db))
            #expect(try Player.fetchAll(db).map(\.name) == ["Cid"])
        }
    }

    @Test func foreignKeysCanBeDisabled() throws {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        let queue = try DatabaseQueue(configuration: configuration)
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                    CREATE TABLE players (id INTEGER PRIMARY KEY, teamID INTEGER REFERENCES teams(id), name TEXT NOT NULL UNIQUE, score INTEGER NOT NULL DEFAULT 0);
                    """)
            try Player(teamID: 3, name: "Dan").insert(db)
            #expect(try Player.fetchCount(db) == 1)
        }
    }

    @Test func fetchCursorOverRecords() throws {
        let queue = try makeRecordQueue()
        try queue.write { db in
            for index in 0..<100 { try Player(name: "p\(index)", score: index).insert(db) }
            let cursor = try Player.fetchCursor(db)
            var total = 0
            try cursor.forEach { total += $0.score }
            #expect(total == 4950)
            #expect(
                try Player.fetchAll(db, sql: "SELECT * FROM players WHERE score >= ? ORDER BY score", arguments: [98]).map(\.name) == [
                    "p98", "p99",
                ])
            #expect(try Player.fetchOne(db, "SELECT * FROM players WHERE name = \("p7")")?.score == 7)
        }
    }

    @Test func primaryKeyMissingFromColumnNamesIsReported() throws {
        struct Broken: TableRecord {
            static let tableName = "players"
            static let columnNames = ["name"]
            var name: String
            init(name: String) { self.name = name }
            init(row: Row) throws { name = try row[0] }
            func encodeColumns(to columns: inout ColumnEncoder) throws { columns.append(name) }
        }
        let queue = try makeRecordQueue()
        let error = #expect(throws: DatabaseError.self) {
            try queue.write { db in try Broken(name: "x").insert(db) }
        }
        #expect(error?.message.contains("primary key column \"id\" is not in columnNames") == true)
    }

    @Test func wrongNumberOfEncodedColumnsIsReported() throws {
        struct Short: TableRecord {
            static let tableName = "teams"
            static let columnNames = ["id", "name"]
            var id: Int
            init(row: Row) throws { id = try row[0] }
            init(id: Int) { self.id = id }
            func encodeColumns(to columns: inout ColumnEncoder) throws { columns.append(id) }
        }
        let queue = try makeRecordQueue()
        let error = #expect(throws: DatabaseError.self) {
            try queue.write { db in try Short(id: 1).insert(db) }
        }
        #expect(error?.resultCode == .misuse)
        #expect(error?.message.contains("appended 1 value(s) for 2 column(s)") == true)
    }
}
