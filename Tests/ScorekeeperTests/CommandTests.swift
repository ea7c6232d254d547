import DependenciesTestSupport
import Foundation
import ScorekeeperCore
import Strata
import StrataTestSupport
import Testing

@Suite(
    "Commands against a database file", .timeLimit(.minutes(5)),
    .dependencies {
        $0.uuid = .incrementing
        $0.date = .constant(Date(timeIntervalSince1970: 1_767_258_000))
    })
struct CommandTests {
    @Test("games and players: add, rename, delete; scores up and down; data kept between runs")
    func lifecycle() throws {
        let directory = try TemporaryDirectory(prefix: "scorekeeper-tests")
        defer { directory.remove() }
        let databasePath = directory.path("scores.sqlite")

        try live(databasePath) {
            let keeper = Scorekeeper()
            #expect(try keeper.games().contains("No games yet"))
            _ = try keeper.addGame(title: "Game night")
            _ = try keeper.addGame(title: "Poker")
            _ = try keeper.addPlayer("Blob", toGame: "game NIGHT")
            _ = try keeper.addPlayer("Blob Jr", toGame: "Game night")
            _ = try keeper.changeScore(of: "Blob", by: 3)
            let afterDecrement = try keeper.changeScore(of: "Blob Jr", by: -2)
            #expect(afterDecrement.hasPrefix("Blob Jr: -2, now -2."))
            _ = try keeper.renamePlayer("Blob Jr", to: "Blob Junior")
            _ = try keeper.renameGame("Poker", to: "Poker night")
        }

        // A second run on the same file: everything is still there.
        try live(databasePath) {
            let keeper = Scorekeeper()
            let games = try keeper.games()
            #expect(
                games == """
                    Games
                      Game         Players  Leader
                      ───────────  ───────  ────────
                      Game night         2  Blob (3)
                      Poker night        0  —
                    """)
            let players = try keeper.players(game: "Game night")
            #expect(players.hasPrefix("Game night — 2 players"))
            let lines = players.split(separator: "\n")
            #expect(lines[3].hasPrefix("  1  Blob             3  246 B · "))
            #expect(lines[4].hasPrefix("  2  Blob Junior     -2  246 B · "))

            let deleted = try keeper.deleteGame("Game night")
            #expect(deleted.hasPrefix("Deleted Game night and its 2 players."))
            @Dependency(\.defaultDatabase) var database
            #expect(try database.read { db in try Player.fetchCount(db) } == 0)
            // The players' avatars went with them.
            #expect(try database.read { db in try db.assetDescriptors() }.isEmpty)
            _ = try keeper.addPlayer("Ada", toGame: "Poker night")
            _ = try keeper.deletePlayer("Ada")
            #expect(try keeper.players(game: "poker night").contains("No players yet"))
        }
    }

    @Test("set-avatar stores the file as an asset and releases the generated one")
    func setAvatar() throws {
        let directory = try TemporaryDirectory(prefix: "scorekeeper-tests")
        defer { directory.remove() }
        let databasePath = directory.path("scores.sqlite")
        let image = directory.url.appendingPathComponent("blob.bmp")
        let bytes = Avatar.identicon(seed: "a custom image", size: 16)
        try bytes.write(to: image)

        try live(databasePath) {
            let keeper = Scorekeeper()
            _ = try keeper.addGame(title: "Game night")
            _ = try keeper.addPlayer("Blob", toGame: "Game night")
            let text = try keeper.setAvatar(of: "Blob", contentsOf: image.path)
            #expect(text.contains("Set Blob's avatar (\(bytes.count) B)."))
            @Dependency(\.defaultDatabase) var database
            let stored = try database.read { db in
                let blob = try Player.all.fetchOne(db)
                return try blob?.assetData(\.avatar, in: db)
            }
            #expect(stored == bytes)
            #expect(try database.read { db in try db.assetDescriptors() }.count == 1)
            #expect(text.contains("\(AssetID(of: bytes).hexadecimal.prefix(8))"))
        }
    }

    @Test("ties go by name, ignoring case; a name can change only its case")
    func tiesAndCase() throws {
        let directory = try TemporaryDirectory(prefix: "scorekeeper-tests")
        defer { directory.remove() }
        let databasePath = directory.path("scores.sqlite")
        try live(databasePath) {
            let keeper = Scorekeeper()
            _ = try keeper.addGame(title: "poker")
            _ = try keeper.addGame(title: "Game night")
            for name in ["zed", "Bob", "adam"] {
                _ = try keeper.addPlayer(name, toGame: "poker")
            }
            // Equal scores: the leader and the ranking go by name, "adam" before "Bob".
            #expect(
                try keeper.games() == """
                    Games
                      Game        Players  Leader
                      ──────────  ───────  ────────
                      Game night        0  —
                      poker             3  adam (0)
                    """)
            #expect(
                try keeper.players(game: "POKER") == """
                    poker — 3 players
                      #  Player  Score  Avatar
                      ─  ──────  ─────  ────────────────
                      1  adam        0  246 B · 8f39dfd4
                      2  Bob         0  246 B · f9423171
                      3  zed         0  246 B · 8d5f42ce
                    """)

            // The player or game itself does not count as taking its own name.
            #expect(try keeper.renamePlayer("bob", to: "BOB").hasPrefix("Renamed Bob to BOB."))
            #expect(throws: ScorekeeperError.duplicatePlayer("Adam", game: "poker")) { try keeper.renamePlayer("zed", to: "Adam") }
            #expect(try keeper.renameGame("poker", to: "Poker").hasPrefix("Renamed poker to Poker."))
            #expect(throws: ScorekeeperError.duplicateGame("game NIGHT")) { try keeper.renameGame("Poker", to: "game NIGHT") }
            #expect(try keeper.changeScore(of: "zed", by: 2).contains("Poker — 3 players"))
            #expect(try keeper.games().contains("  Poker             3  zed (2)"))
        }
    }

    @Test("mistakes are reported in words, and change nothing")
    func errors() throws {
        let directory = try TemporaryDirectory(prefix: "scorekeeper-tests")
        defer { directory.remove() }
        let databasePath = directory.path("scores.sqlite")
        try live(databasePath) {
            let keeper = Scorekeeper()
            _ = try keeper.addGame(title: "Game night")
            _ = try keeper.addGame(title: "Poker")
            _ = try keeper.addPlayer("Blob", toGame: "Game night")
            _ = try keeper.addPlayer("Blob", toGame: "Poker")

            #expect(throws: ScorekeeperError.duplicateGame("game night")) { try keeper.addGame(title: "game night") }
            #expect(throws: ScorekeeperError.noSuchGame("Chess", known: ["Game night", "Poker"])) { try keeper.players(game: "Chess") }
            #expect(throws: ScorekeeperError.ambiguousPlayer("Blob", games: ["Game night", "Poker"])) {
                try keeper.changeScore(of: "Blob", by: 1)
            }
            #expect(throws: ScorekeeperError.duplicatePlayer("BLOB", game: "Poker")) { try keeper.addPlayer("BLOB", toGame: "Poker") }
            #expect(throws: ScorekeeperError.emptyName) { try keeper.addGame(title: "  ") }
            #expect(throws: ScorekeeperError.noSuchPlayer("Ada", game: nil)) { try keeper.deletePlayer("Ada") }
            #expect(throws: ScorekeeperError.self) { try keeper.setAvatar(of: "Blob", contentsOf: "/nonexistent/image.bmp", game: "Poker") }

            // --game picks one of the two.
            let text = try keeper.changeScore(of: "Blob", by: 4, game: "Poker")
            #expect(text.hasPrefix("Blob: +4, now 4."))
            #expect(ScorekeeperError.ambiguousPlayer("Blob", games: ["Game night", "Poker"]).description.contains("--game"))
        }
    }
}
