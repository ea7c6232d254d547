import Foundation
import StrataAssets
import StrataSQLite
import Testing

@Suite(.timeLimit(.minutes(5))) struct ReferenceTests {
    func chunkRowCount(_ queue: DatabaseQueue) throws -> Int {
        try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM strata_asset_chunks") ?? -1 }
    }

    @Test func sameContentIsStoredOnce() throws {
        let (queue, store) = try makeStore(chunkSize: 4096)
        let data = TestBytes.text(count: 20_000)
        let alice = AssetOwner(table: "players", key: 1, name: "avatar")
        let bob = AssetOwner(table: "players", key: 2, name: "avatar")
        let first = try store.put(data, owner: alice)
        let chunks = try chunkRowCount(queue)
        let second = try store.put(data, owner: bob)
        #expect(first.id == second.id)
        #expect(second.referenceCount == 2)
        #expect(try chunkRowCount(queue) == chunks)
        #expect(try store.descriptors().count == 1)

        // A streamed put of the same bytes is deduplicated at its end.
        let third = try store.put(owner: AssetOwner(table: "games", key: "x")) { try $0.write(data) }
        #expect(third.id == first.id)
        #expect(third.referenceCount == 3)
        #expect(try chunkRowCount(queue) == chunks)
    }

    @Test func deletingOneOwnerKeepsTheOthersCopy() throws {
        let (queue, store) = try makeStore(chunkSize: 4096)
        let data = TestBytes.text(count: 20_000)
        let alice = AssetOwner(table: "players", key: 1, name: "avatar")
        let bob = AssetOwner(table: "players", key: 2, name: "avatar")
        let id = try store.put(data, owner: alice).id
        try store.put(data, owner: bob)

        #expect(try store.delete(owner: alice))
        #expect(try store.descriptor(id)?.referenceCount == 1)
        #expect(try store.get(id) == data)
        #expect(try store.references(to: id).map(\.owner) == [bob])

        #expect(try store.delete(owner: bob))
        #expect(try store.descriptor(id) == nil)
        #expect(try chunkRowCount(queue) == 0)
        #expect(try store.delete(owner: bob) == false)
    }

    @Test func replacingAnOwnersAssetReleasesTheOldOne() throws {
        let (_, store) = try makeStore()
        let owner = AssetOwner(table: "players", key: 1, name: "avatar")
        let old = try store.put(Data("old".utf8), owner: owner).id
        let new = try store.put(Data("new".utf8), owner: owner).id
        #expect(try store.descriptor(old) == nil)
        #expect(try store.descriptor(new)?.referenceCount == 1)
        #expect(try store.references(table: "players", key: "1").map(\.asset) == [new])
    }

    @Test func listByOwner() throws {
        let (_, store) = try makeStore()
        try store.put(Data("a".utf8), owner: AssetOwner(table: "players", key: 1, name: "avatar"))
        try store.put(Data("b".utf8), owner: AssetOwner(table: "players", key: 1, name: "banner"))
        try store.put(Data("c".utf8), owner: AssetOwner(table: "players", key: 2, name: "avatar"))
        let owned = try store.assets(ownedBy: "players", key: "1")
        #expect(owned.map(\.name) == ["avatar", "banner"])
        #expect(owned.map(\.descriptor.id) == [AssetID(of: Data("a".utf8)), AssetID(of: Data("b".utf8))])
        #expect(try store.references(table: "players").count == 3)
    }

    @Test func deleteRefusesReferencedAssetsAndSweepsUnreferenced() throws {
        let (_, store) = try makeStore()
        let referenced = try store.put(Data("kept".utf8), owner: AssetOwner(table: "t", key: 1)).id
        let orphan = try store.put(Data("orphan".utf8)).id
        #expect(throws: AssetError.stillReferenced(referenced, referenceCount: 1)) { try store.delete(referenced) }
        #expect(try store.delete(orphan))
        #expect(try store.descriptor(orphan) == nil)
        try store.put(Data("orphan2".utf8))
        #expect(try store.deleteUnreferenced() == 1)
        #expect(try store.descriptors().map(\.id) == [referenced])
    }

    @Test func referenceToUnknownAssetFails() throws {
        let (_, store) = try makeStore()
        let id = AssetID(of: Data("nope".utf8))
        #expect(throws: AssetError.notFound(id)) { try store.setReference(id, owner: AssetOwner(table: "t", key: 1)) }
    }
}

/// A record with an asset column, as an app would declare it.
struct Player: TableRecord, Equatable {
    static let tableName = "players"
    static let columnNames = ["id", "gameID", "name", "avatar"]
    var id: Int64
    var gameID: Int64
    var name: String
    var avatar: AssetID?

    init(id: Int64, gameID: Int64, name: String, avatar: AssetID?) {
        self.id = id
        self.gameID = gameID
        self.name = name
        self.avatar = avatar
    }

    init(row: Row) throws {
        id = try row[0]
        gameID = try row[1]
        name = try row[2]
        avatar = try row[3]
    }

    func encodeColumns(to columns: inout ColumnEncoder) {
        columns.append(id)
        columns.append(gameID)
        columns.append(name)
        columns.append(avatar)
    }
}

@Suite(.timeLimit(.minutes(5))) struct RecordColumnTests {
    func makeDatabase() throws -> (DatabaseQueue, AssetStore) {
        let queue = try DatabaseQueue()
        var migrator = DatabaseMigrator()
        AssetSchema.registerMigration(in: &migrator)
        migrator.registerMigration("games and players") { db in
            try db.execute(
                sql: """
                    CREATE TABLE games (id INTEGER PRIMARY KEY, title TEXT NOT NULL);
                    CREATE TABLE players (
                        id INTEGER PRIMARY KEY,
                        gameID INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        avatar TEXT REFERENCES strata_assets(sha256));
                    """)
            try db.trackAssetColumn(table: "players", column: "avatar")
        }
        try migrator.migrate(queue)
        return (queue, try AssetStore(queue))
    }

    @Test func putAndInsertInOneTransaction() throws {
        let (queue, store) = try makeDatabase()
        let image = TestBytes.random(count: 5000)
        let player = try queue.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES (1, 'Cup')")
            let avatar = try db.putAsset(image)
            let player = Player(id: 1, gameID: 1, name: "Alice", avatar: avatar.id)
            try player.insert(db)
            return player
        }
        #expect(try store.descriptor(AssetID(of: image))?.referenceCount == 1)
        #expect(try queue.read { db in try player.assetData(\.avatar, in: db) } == image)
        let fetched = try queue.read { db in try Player.find(db, id: 1) }
        #expect(try fetched.openAsset(\.avatar, in: store)?.next() == image)
        #expect(try store.references(table: "players", key: "1").map(\.owner.name) == ["avatar"])
    }

    @Test func rolledBackTransactionLeavesNoAsset() throws {
        let (queue, store) = try makeDatabase()
        struct Abort: Error {}
        #expect(throws: Abort.self) {
            try queue.write { db in
                try db.putAsset(Data("never".utf8))
                throw Abort()
            }
        }
        #expect(try store.descriptors().isEmpty)
    }

    @Test func cascadeDeleteReleasesTheReference() throws {
        let (queue, store) = try makeDatabase()
        let shared = TestBytes.text(count: 10_000)
        let own = TestBytes.text(count: 10_000, seed: 7)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES (1, 'Cup'), (2, 'League')")
            let sharedID = try db.putAsset(shared).id
            let ownID = try db.putAsset(own).id
            try Player(id: 1, gameID: 1, name: "Alice", avatar: sharedID).insert(db)
            try Player(id: 2, gameID: 1, name: "Bob", avatar: ownID).insert(db)
            try Player(id: 3, gameID: 2, name: "Carol", avatar: sharedID).insert(db)
        }
        #expect(try store.descriptor(AssetID(of: shared))?.referenceCount == 2)

        // Deleting game 1 cascades to Alice and Bob: Bob's avatar goes, the shared one stays.
        try queue.write { db in try db.execute(sql: "DELETE FROM games WHERE id = 1") }
        #expect(try queue.read { db in try Player.fetchCount(db) } == 1)
        #expect(try store.descriptor(AssetID(of: own)) == nil)
        #expect(try store.descriptor(AssetID(of: shared))?.referenceCount == 1)
        #expect(try store.get(AssetID(of: shared)) == shared)

        try queue.write { db in try db.execute(sql: "DELETE FROM games") }
        #expect(try store.descriptors().isEmpty)
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM strata_asset_chunks") } == 0)
    }

    @Test func updatingTheColumnMovesTheReference() throws {
        let (queue, store) = try makeDatabase()
        let first = Data("first".utf8)
        let second = Data("second".utf8)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES (1, 'Cup')")
            try Player(id: 1, gameID: 1, name: "Alice", avatar: try db.putAsset(first).id).insert(db)
        }
        try queue.write { db in
            var player = try Player.find(db, id: 1)
            player.avatar = try db.putAsset(second).id
            try player.update(db)
        }
        #expect(try store.descriptor(AssetID(of: first)) == nil)
        #expect(try store.descriptor(AssetID(of: second))?.referenceCount == 1)

        try queue.write { db in try db.execute(sql: "UPDATE players SET avatar = NULL") }
        #expect(try store.descriptors().isEmpty)

        try queue.write { db in
            let id = try db.putAsset(first).id
            try db.execute(sql: "UPDATE players SET avatar = ?", arguments: [id])
            try db.execute(sql: "UPDATE players SET id = 7")  // the key moves, the reference follows
        }
        #expect(try store.references(table: "players").map(\.owner.key) == ["7"])
        #expect(try store.descriptor(AssetID(of: first))?.referenceCount == 1)
    }

    @Test func insertingAnUnknownAssetFails() throws {
        let (queue, _) = try makeDatabase()
        #expect(throws: DatabaseError.self) {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO games (id, title) VALUES (1, 'Cup')")
                try Player(id: 1, gameID: 1, name: "Alice", avatar: AssetID(of: Data("ghost".utf8))).insert(db)
            }
        }
    }

    @Test func migratorRecordsTheAssetMigration() throws {
        let (queue, _) = try makeDatabase()
        var migrator = DatabaseMigrator()
        AssetSchema.registerMigration(in: &migrator)
        #expect(try queue.read { db in try migrator.appliedIdentifiers(db) }.first == AssetSchema.migrationIdentifier)
    }
}
