import Foundation
import ScorekeeperCore
import Strata
import StrataTestSupport
import Testing

/// `scorekeeper-live share` and `accept` between two users' processes, each with its own file
/// and keys, through one cloud (MockCloud here; the commands connect to strata-cloud).
@Suite("Live sharing between two processes", .timeLimit(.minutes(2)))
struct LiveSharingTests {
    /// One process's dependencies: its file, its user's container, its key file.
    func process(database: String, keys: String, container: any CloudContainer) async throws -> DependencyValues {
        let context = withDependencies {
            $0.context = .live
        } operation: {
            DependencyValues._current
        }
        return try await runOnBackgroundThread {
            try withDependencies {
                $0 = context
            } operation: {
                var values = context
                try values.bootstrapDatabase(path: database)
                try values.bootstrapSyncEngine(container: container, keys: keys)
                return values
            }
        }
    }

    @Test func blobSharesAGameAndBlobJrAcceptsItInAnotherProcess() async throws {
        let directory = try TemporaryDirectory(prefix: "live-sharing")
        defer { directory.remove() }
        let cloud = MockCloud()
        let blob = try await process(
            database: directory.path("blob.sqlite"), keys: directory.path("blob.keys"), container: cloud.container(user: "blob"))
        let blobJr = try await process(
            database: directory.path("jr.sqlite"), keys: directory.path("jr.keys"), container: cloud.container(user: "blob jr"))
        defer {
            blob.defaultSyncEngine.stop()
            blobJr.defaultSyncEngine.stop()
        }

        let shareOutput = try await withDependencies {
            $0 = blob
        } operation: {
            try await runOnBackgroundThread { [blob] in
                try withDependencies {
                    $0 = blob
                } operation: {
                    _ = try Scorekeeper().addGame(title: "Game night")
                    _ = try Scorekeeper().addPlayer("Blob", toGame: "Game night")
                }
            }
            try await blob.defaultSyncEngine.syncChanges()
            return try await LiveSharing.share(game: "Game night", with: "blob jr", readOnly: true)
        }
        #expect(shareOutput.contains("Shared Game night with blob jr, read-only."))
        #expect(shareOutput.contains("Shared with blob jr (invited)"))
        let url = try #require(
            shareOutput.split(separator: "\n").first { $0.hasPrefix("Share URL: ") }.map { String($0.dropFirst("Share URL: ".count)) })
        #expect(url.contains("?permission=readOnly#k="), "the permission and the link key travel with the URL")

        let acceptOutput = try await withDependencies {
            $0 = blobJr
        } operation: {
            try await LiveSharing.accept(url: url)
        }
        #expect(acceptOutput.contains("Accepted blob's \"Game night\", read-only."))
        #expect(acceptOutput.contains("Game night"))
        #expect(acceptOutput.contains("Shared by blob"))
        let players = try await blobJr.defaultDatabase.read { db in try String.fetchAll(db, sql: "SELECT name FROM players") }
        #expect(players == ["Blob"])

        // Read-only: Blob Jr's rename is refused on Blob Jr's side.
        await #expect(throws: DatabaseError.self) {
            try await runOnBackgroundThread { [blobJr] in
                try withDependencies {
                    $0 = blobJr
                } operation: {
                    _ = try Scorekeeper().renameGame("Game night", to: "Mine")
                }
            }
        }

        // Blob lets Blob Jr edit; Blob Jr's change reaches Blob.
        let again = try await withDependencies {
            $0 = blob
        } operation: {
            try await LiveSharing.share(game: "Game night", with: "blob jr", readOnly: false)
        }
        #expect(again.contains("read-write"))
        try await blobJr.defaultSyncEngine.syncChanges()
        try await runOnBackgroundThread { [blobJr] in
            try withDependencies {
                $0 = blobJr
            } operation: {
                _ = try Scorekeeper().addPlayer("Blob Jr", toGame: "Game night")
            }
        }
        try await blobJr.defaultSyncEngine.syncChanges()
        try await blob.defaultSyncEngine.syncChanges()
        let blobsPlayers = try await blob.defaultDatabase.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM players ORDER BY name")
        }
        #expect(blobsPlayers == ["Blob", "Blob Jr"])
    }

    @Test func aURLThatIsNotAShareIsRefusedByName() async throws {
        await #expect(throws: ScorekeeperError.notAShareURL("https://example.com")) {
            try await LiveSharing.accept(url: "https://example.com")
        }
    }
}
