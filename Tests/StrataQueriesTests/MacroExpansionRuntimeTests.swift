import Foundation
import StrataQueries
import StrataSQLite
import Testing

/// Types that use `@Table` and `@Selection` for real: the generated code must compile against
/// the runtime and round-trip rows through SQLite.
enum MacroRuntime {
    @Table struct Player: Identifiable {
        @Column(as: UUID.BytesRepresentation.self) let id: UUID
        var gameID: Int
        @Column("display_name") var name = ""
        var score = 0
        @Column(as: Date.UnixTimeRepresentation.self) var joinedAt: Date
        @Column(generated: .virtual) var nameLength: Int
        @Ephemeral var isSelected = false
        @Column(as: Date.UnixTimeRepresentation.self) var lastSeenAt: Date?
        var nickname: String?
        var doubled: Int { score * 2 }
        static var shared: Int { 0 }
    }

    /// No primary key.
    @Table("game_tags") struct GameTag {
        var gameID: Int
        var tag: String
    }

    /// An integer key SQLite assigns, inserted through its draft.
    @Table struct Category: Identifiable {
        var id: Int
        var title: String
        var parentID: Self.ID?
        @Column(as: JSONRepresentation<[String]>.self) var aliases: [String] = []
    }

    /// Codable too: its `init(row:)` must still be the by-index one of `Table`.
    @Table struct Setting: Codable {
        @Column(primaryKey: true) var key: String
        var value: String
    }

    // Qualified: the generated extension is at file scope, where siblings of a nested type
    // are not in scope.
    @Selection struct PlayerRow {
        let player: MacroRuntime.Player
        let playerCount: Int
        @Column(as: Date.UnixTimeRepresentation.self) var latest: Date?
        @Ephemeral var note = "n/a"
    }
}

/// A public table: every generated member must be public for the conformances to hold.
public enum MacroRuntimePublic {
    @Table public struct Tag: Identifiable, Sendable {
        public var id: Int
        public var title: String
    }

    /// Not declared `Sendable`: the conformance to `Table` implies it.
    @Table public struct Label {
        public var name: String
    }
}

@Suite(.timeLimit(.minutes(5))) struct MacroExpansionRuntimeTests {
    typealias Player = MacroRuntime.Player
    typealias GameTag = MacroRuntime.GameTag
    typealias Category = MacroRuntime.Category
    typealias Setting = MacroRuntime.Setting
    typealias PlayerRow = MacroRuntime.PlayerRow

    static let schema = """
        CREATE TABLE players (
            id BLOB PRIMARY KEY NOT NULL,
            gameID INTEGER NOT NULL,
            display_name TEXT NOT NULL,
            score INTEGER NOT NULL,
            joinedAt REAL NOT NULL,
            lastSeenAt REAL,
            nickname TEXT,
            nameLength INTEGER GENERATED ALWAYS AS (length(display_name)) VIRTUAL
        );
        CREATE TABLE game_tags (gameID INTEGER NOT NULL, tag TEXT NOT NULL);
        CREATE TABLE categories (id INTEGER PRIMARY KEY, title TEXT NOT NULL, parentID INTEGER, aliases TEXT NOT NULL);
        CREATE TABLE settings (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
        CREATE TABLE tags (id INTEGER PRIMARY KEY, title TEXT NOT NULL);
        """

    func makeDatabase() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: Self.schema) }
        return queue
    }

    let alice = Player(
        id: UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!,
        gameID: 1,
        name: "Alice",
        score: 12,
        joinedAt: Date(timeIntervalSince1970: 1_700_000_000.5),
        nameLength: 0,
        lastSeenAt: nil,
        nickname: "Al")

    @Test func schema() {
        #expect(Player.tableName == "players")
        #expect(Player.columnNames == ["id", "gameID", "display_name", "score", "joinedAt", "lastSeenAt", "nickname"])
        #expect(Player.generatedColumnNames == ["nameLength"])
        #expect(Player.primaryKeyColumnNames == ["id"])
        #expect(Player.columnCount == 8)
        #expect(Player.selectedColumnNames == Player.columnNames + ["nameLength"])
        #expect(Player.columns.name.name == "display_name")
        #expect(Player.columns.primaryKey.name == "id")
        #expect(Player.columns.queryFragment.sql.hasPrefix(#""players"."id", "players"."gameID", "players"."display_name""#))
        #expect(Player.columns.queryFragment.sql.hasSuffix(#""players"."nickname", "players"."nameLength""#))

        #expect(GameTag.tableName == "game_tags")
        #expect(GameTag.primaryKeyColumnNames.isEmpty)
        #expect(GameTag.generatedColumnNames.isEmpty)
        #expect(Category.tableName == "categories")
        #expect(Setting.primaryKeyColumnNames == ["key"])
        #expect(MacroRuntimePublic.Tag.tableName == "tags")
        #expect(MacroRuntimePublic.Label.columnNames == ["name"])
        #expect(PlayerRow.columnCount == Player.columnCount + 2)
    }

    @Test func insertFetchAndFind() throws {
        let db = try makeDatabase()
        let bob = Player(
            id: UUID(uuidString: "00000000-0000-0000-0000-0000000000B0")!, gameID: 1, name: "Bob", score: 3,
            joinedAt: Date(timeIntervalSince1970: 1_600_000_000), nameLength: 0,
            lastSeenAt: Date(timeIntervalSince1970: 1_650_000_000.25), nickname: nil)
        try db.write { db in
            try alice.insert(db)
            try bob.insert(db)
        }
        let players = try db.read { db in try Player.fetchAll(db) }
        #expect(players.count == 2)
        let fetchedAlice = try #require(players.first { $0.name == "Alice" })
        #expect(fetchedAlice.id == alice.id)
        #expect(fetchedAlice.gameID == 1)
        #expect(fetchedAlice.score == 12)
        #expect(fetchedAlice.joinedAt == alice.joinedAt)
        #expect(fetchedAlice.lastSeenAt == nil)
        #expect(fetchedAlice.nickname == "Al")
        // The generated column, read back; the ephemeral property, at its default.
        #expect(fetchedAlice.nameLength == 5)
        #expect(fetchedAlice.isSelected == false)

        let found = try db.read { db in try Player.find(db, id: UUID.BytesRepresentation(queryOutput: bob.id)) }
        #expect(found.name == "Bob")
        #expect(found.lastSeenAt == Date(timeIntervalSince1970: 1_650_000_000.25))
        #expect(found.nickname == nil)
        #expect(found.nameLength == 3)

        // The stored forms: a 16-byte blob, seconds as a REAL, the renamed column.
        let stored = try db.read { db in
            try db.fetchOne(
                sql: "SELECT typeof(id), length(id), typeof(joinedAt), joinedAt, display_name FROM players WHERE gameID = 1 AND score = 12"
            ) { row in
                (row.value(at: 0), row.value(at: 1), row.value(at: 2), row.value(at: 3), row.value(at: 4))
            }
        }
        let (idType, idLength, joinedType, joined, name) = try #require(stored)
        #expect(idType == .text("blob"))
        #expect(idLength == .integer(16))
        #expect(joinedType == .text("real"))
        #expect(joined == .real(1_700_000_000.5))
        #expect(name == .text("Alice"))

        var updated = found
        updated.score = 30
        updated.name = "Robert"
        try db.write { db in try updated.update(db) }
        let refetched = try db.read { db in try Player.find(db, id: UUID.BytesRepresentation(queryOutput: bob.id)) }
        #expect(refetched.score == 30)
        #expect(refetched.nameLength == 6)
    }

    @Test func encodedColumns() throws {
        var encoder = ColumnEncoder()
        try alice.encodeColumns(to: &encoder)
        #expect(
            encoder.capturedValues == [
                .blob(withUnsafeBytes(of: alice.id.uuid) { Data($0) }),
                .integer(1),
                .text("Alice"),
                .integer(12),
                .real(1_700_000_000.5),
                .null,
                .text("Al"),
            ])
    }

    @Test func draft() throws {
        let draft = Player.Draft(gameID: 2, name: "Carol", joinedAt: Date(timeIntervalSince1970: 10))
        #expect(draft.id == nil)
        #expect(draft.score == 0)
        #expect(draft.lastSeenAt == nil)
        var encoder = ColumnEncoder()
        try draft.encodeColumns(to: &encoder)
        #expect(encoder.capturedValues == [.null, .integer(2), .text("Carol"), .integer(0), .real(10), .null, .null])
        #expect(encoder.capturedValues.count == Player.columnNames.count)

        let copy = Player.Draft(alice)
        #expect(copy.id == alice.id)
        #expect(copy.name == "Alice")
        var copyEncoder = ColumnEncoder()
        try copy.encodeColumns(to: &copyEncoder)
        var recordEncoder = ColumnEncoder()
        try alice.encodeColumns(to: &recordEncoder)
        #expect(copyEncoder.capturedValues == recordEncoder.capturedValues)

        // A draft without a key, inserted by binding its values: SQLite assigns the key.
        let db = try makeDatabase()
        let category = Category.Draft(title: "Puzzles", aliases: ["logic", "riddles"])
        var categoryEncoder = ColumnEncoder()
        try category.encodeColumns(to: &categoryEncoder)
        #expect(categoryEncoder.capturedValues == [.null, .text("Puzzles"), .null, .text(#"["logic","riddles"]"#)])
        try db.write { db in
            try db.execute(
                sql: "INSERT INTO categories (id, title, parentID, aliases) VALUES (?, ?, ?, ?)",
                arguments: StatementArguments(categoryEncoder.capturedValues))
        }
        let categories = try db.read { db in try Category.fetchAll(db) }
        #expect(categories.count == 1)
        #expect(categories.first?.id == 1)
        #expect(categories.first?.title == "Puzzles")
        #expect(categories.first?.aliases == ["logic", "riddles"])
        #expect(categories.first?.parentID == nil)
    }

    @Test func tableWithoutPrimaryKey() throws {
        let db = try makeDatabase()
        try db.write { db in
            try GameTag(gameID: 1, tag: "fun").insert(db)
            try GameTag(gameID: 2, tag: "long").insert(db)
        }
        let tags = try db.read { db in try GameTag.fetchAll(db) }
        #expect(tags.map(\.tag).sorted() == ["fun", "long"])
    }

    @Test func codableTableAndPublicTable() throws {
        let db = try makeDatabase()
        try db.write { db in
            try Setting(key: "theme", value: "dark").insert(db)
            try MacroRuntimePublic.Tag(id: 7, title: "seven").insert(db)
        }
        let setting = try db.read { db in try Setting.find(db, id: "theme") }
        #expect(setting.value == "dark")
        let tag = try db.read { db in try MacroRuntimePublic.Tag.find(db, id: 7) }
        #expect(tag.title == "seven")
    }

    @Test func selection() throws {
        let db = try makeDatabase()
        try db.write { db in try alice.insert(db) }
        let columns = PlayerRow.Columns(
            player: Player.columns,
            playerCount: SQLQueryExpression<Int>("count(*) OVER ()"),
            latest: Player.columns.lastSeenAt)
        #expect(columns.queryFragment.sql.hasSuffix(#", count(*) OVER (), "players"."lastSeenAt""#))
        let rows = try db.read { db in
            try PlayerRow.fetchAll(db, sql: "SELECT \(columns.queryFragment.sql) FROM players")
        }
        #expect(rows.count == 1)
        #expect(rows.first?.player.name == "Alice")
        #expect(rows.first?.player.nameLength == 5)
        #expect(rows.first?.playerCount == 1)
        #expect(rows.first?.latest == nil)
        #expect(rows.first?.note == "n/a")
    }
}
