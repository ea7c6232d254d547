import Dependencies
import DependenciesTestSupport
import Foundation
import Strata
import StrataTestSupport
import Testing

// The seeds' code as a SQLiteData user brings it: models, bootstrap, queries over
// `SyncMetadata`, sharing and participants. The only change from SQLiteData is the import; a test
// target of its own keeps the seeds' type names.

@Table struct Game: Identifiable, Equatable {
    let id: UUID
    var title = ""
}

@Table struct Player: Identifiable, Equatable {
    let id: UUID
    var gameID: Game.ID
    var name = ""
    var score = 0
}

@Selection struct GameRow: Equatable {
    let game: Game
    let playerCount: Int
    let isShared: Bool
}

/// Who else a shared record is shared with, by the names of their profiles: a function of the
/// share the sync metadata keeps, for queries and views.
@DatabaseFunction(as: ((JSONRepresentation<CloudShare>?) -> String).self)
func sharedWith(_ share: CloudShare?) -> String {
    guard let share else { return "Not shared" }
    let others = share.participants.filter { $0.user != share.currentUser && $0.acceptance != .removed }
    guard !others.isEmpty else { return "Not shared" }
    return "Shared with " + others.map { $0.displayName ?? $0.user }.joined(separator: ", ")
}

enum SeedsPort {
    static func appDatabase() throws -> any DatabaseWriter {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.attachMetadatabase()
            try db.add(function: $sharedWith)
        }
        let database = try defaultDatabase(configuration: configuration)
        var migrator = DatabaseMigrator()
        #if DEBUG
            migrator.eraseDatabaseOnSchemaChange = true
        #endif
        migrator.registerMigration("Create tables") { db in
            try #sql(
                """
                CREATE TABLE "games" (
                  "id" TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()),
                  "title" TEXT NOT NULL DEFAULT ''
                ) STRICT
                """
            )
            .execute(db)
            try #sql(
                """
                CREATE TABLE "players" (
                  "id" TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()),
                  "gameID" TEXT NOT NULL REFERENCES "games"("id") ON DELETE CASCADE,
                  "name" TEXT NOT NULL DEFAULT '',
                  "score" INTEGER NOT NULL DEFAULT 0
                ) STRICT
                """
            )
            .execute(db)
        }
        try migrator.migrate(database)
        return database
    }
}

extension DependencyValues {
    mutating func bootstrapSeedsPort() throws {
        defaultDatabase = try SeedsPort.appDatabase()
        defaultSyncEngine = try SyncEngine(for: defaultDatabase, tables: Game.self, Player.self)
    }
}

@Suite("The seeds' code runs against Strata with only its import changed", .timeLimit(.minutes(2)))
struct SQLiteDataPortTests {
    @Test func modelsBootstrapQueriesAndSharing() async throws {
        let context = withDependencies {
            $0.context = .test
            $0.uuid = .incrementing
        } operation: {
            DependencyValues._current
        }
        // The bootstrap writes synchronously (opening, migrating): on a thread of its own, with
        // the test's dependencies current there, as `prepareDependencies` would run it.
        let values = try await runOnBackgroundThread {
            try withDependencies {
                $0 = context
            } operation: {
                var values = context
                try values.bootstrapSeedsPort()
                return values
            }
        }
        try await withDependencies {
            $0 = values
        } operation: {
            try await exercise()
        }
    }

    func exercise() async throws {
        @Dependency(\.defaultDatabase) var database
        @Dependency(\.defaultSyncEngine) var syncEngine
        #expect(syncEngine.status.isRunning, "started, with nothing automatic in tests")
        #expect(syncEngine.container is MockCloudContainer)

        try await database.write { db in
            try Game.insert { Game.Draft(title: "Poker") }.execute(db)
            try Game.insert { Game.Draft(title: "Chess") }.execute(db)
        }
        let games = try await database.read { db in try Game.order(by: \.title).fetchAll(db) }
        #expect(games.map(\.title) == ["Chess", "Poker"])
        // `DEFAULT (uuid())` draws from the `uuid` dependency: deterministic ids.
        #expect(Set(games.map(\.id)) == [UUID(0), UUID(1)])
        let poker = try #require(games.first { $0.title == "Poker" })
        try await database.write { db in
            try Player.insert { Player.Draft(gameID: poker.id, name: "Blob") }.execute(db)
            try Player.insert { Player.Draft(gameID: poker.id, name: "Blob Jr") }.execute(db)
            try Player.where { $0.name.eq("Blob") }.update { $0.score += 1 }.execute(db)
        }

        try await syncEngine.sendChanges()

        func rows() async throws -> [GameRow] {
            try await database.read { db in
                try Game.group(by: \.id)
                    .leftJoin(Player.all) { $0.id.eq($1.gameID) }
                    .leftJoin(SyncMetadata.all) { $0.syncMetadataID.eq($2.id) }
                    .order { _, players, _ in players.count().desc() }
                    .select { GameRow.Columns(game: $0, playerCount: $1.count(), isShared: $2.isShared.ifnull(false)) }
                    .fetchAll(db)
            }
        }
        #expect(
            try await rows() == [
                GameRow(game: poker, playerCount: 2, isShared: false),
                GameRow(game: Game(id: UUID(1), title: "Chess"), playerCount: 0, isShared: false),
            ])

        // Metadata as the seeds read it: by a row's id, and in a join.
        let metadata = try #require(try await database.read { db in try SyncMetadata.find(poker.syncMetadataID).fetchOne(db) })
        #expect(metadata.hasLastKnownServerRecord)
        #expect(metadata.lastKnownServerRecord?.fields["title"] == .text("Poker"))
        #expect(metadata.parentRecordName == nil)
        let sentPlayers = try await database.read { db in
            try Player.join(SyncMetadata.all) { $0.syncMetadataID.eq($1.id) }
                .where { $1.hasLastKnownServerRecord }
                .select { ($0.name, $1.parentRecordName) }
                .order { player, _ in player.name }
                .fetchAll(db)
        }
        #expect(sentPlayers.map(\.0) == ["Blob", "Blob Jr"])
        #expect(sentPlayers.map(\.1) == ["\(poker.id.uuidString.lowercased()):games", "\(poker.id.uuidString.lowercased()):games"])

        // Sharing: the owner shares, another user accepts, both see it in their queries, with
        // the names of the participants' profiles.
        let cloud = try #require((syncEngine.container as? MockCloudContainer)?.cloud)
        try await syncEngine.container.setUserProfile(CloudUserProfile(displayName: "Blob", email: "blob@example.com"))
        try await cloud.container(user: "bob").setUserProfile(CloudUserProfile(displayName: "Bob"))
        let shared = try await syncEngine.share(record: poker) { share in
            share.title = poker.title
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
        }
        #expect(try await rows().first?.isShared == true)
        let share = try await database.read { db in try SyncMetadata.find(poker.syncMetadataID).fetchOne(db)?.share }
        #expect(share?.title == "Poker")
        #expect(share?.owner == "preview-user")
        #expect(share?.participants.map(\.user) == ["preview-user", "bob"])
        // Bob is invited, not joined yet: an invitation reveals nothing of him but his id.
        #expect(share?.participants.map(\.displayName) == ["Blob", nil])
        func sharing(in database: any DatabaseWriter) async throws -> [String] {
            try await database.read { db in
                try Game.join(SyncMetadata.all) { $0.syncMetadataID.eq($1.id) }
                    .order { game, _ in game.title }
                    .select { $sharedWith($1.share) }
                    .fetchAll(db)
            }
        }
        #expect(try await sharing(in: database) == ["Not shared", "Shared with bob"])
        let bobsDatabase = try await runOnBackgroundThread { try SeedsPort.appDatabase() }
        let bobsEngine = try await runOnBackgroundThread {
            try SyncEngine(
                for: bobsDatabase, tables: Game.self, Player.self, container: cloud.container(user: "bob"),
                configuration: SyncEngineConfiguration(schedule: nil))
        }
        defer { bobsEngine.stop() }
        let accepted = try await bobsEngine.acceptShare(url: shared.url)
        #expect(accepted.currentUserParticipant?.acceptance == .accepted)
        let bobsGames = try await bobsDatabase.read { db in
            try Game.leftJoin(SyncMetadata.all) { $0.syncMetadataID.eq($1.id) }
                .select { ($0.title, $1.isShared.ifnull(false), $1.isOwnedByCurrentUser.ifnull(true)) }
                .fetchAll(db)
        }
        #expect(bobsGames.map(\.0) == ["Poker"])
        #expect(bobsGames.map(\.1) == [true])
        #expect(bobsGames.map(\.2) == [false])
        let bobsPlayers = try await bobsDatabase.read { db in try Player.order(by: \.name).fetchAll(db) }
        #expect(bobsPlayers.map(\.name) == ["Blob", "Blob Jr"])
        #expect(bobsPlayers.map(\.score) == [1, 0])
        #expect(try await sharing(in: bobsDatabase) == ["Shared with Blob"])

        // Bob accepted, then renames himself; the owner's engine refreshes the share with the
        // zone's next change, and the query shows his name.
        try await cloud.container(user: "bob").setUserProfile(CloudUserProfile(displayName: "Robert"))
        try await bobsDatabase.write { db in
            try Player.where { $0.name.eq("Blob Jr") }.update { $0.score += 1 }.execute(db)
        }
        try await bobsEngine.sendChanges()
        try await syncEngine.fetchChanges()
        #expect(try await sharing(in: database) == ["Not shared", "Shared with Robert"])
    }
}
