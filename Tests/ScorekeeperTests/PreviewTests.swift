import DependenciesTestSupport
import Foundation
import ScorekeeperCore
import Strata
import Testing

@Suite(
    "Preview mode", .timeLimit(.minutes(5)),
    .dependencies {
        $0.uuid = .incrementing
        $0.date = .constant(Date(timeIntervalSince1970: 1_767_258_000))
    })
struct PreviewTests {
    /// A preview name of the test's own: preview databases are shared by name in the process.
    let name = "scorekeeper-preview-tests-\(UUID().uuidString)"

    @Test("the preview database is seeded with the sample games, players and avatars")
    func seeded() throws {
        try withDependencies {
            $0.context = .preview
            try $0.bootstrapDatabase(path: name)
        } operation: {
            @Dependency(\.defaultDatabase) var database
            let scoreboard = try database.read { db in try ScoreboardRequest().fetch(db) }
            #expect(scoreboard.games.map(\.game.title) == ["Family Game Night", "Mahjong Club", "Solo Scrabble", "Weekly Poker Night"])
            #expect(scoreboard.sections.flatMap(\.players).count == 10)
            #expect(scoreboard.sections.flatMap(\.players).allSatisfy { $0.avatarSize == 246 })
            let family = try #require(scoreboard.sections.first)
            #expect(family.players.map(\.player.name) == ["Blob Sr", "Blob", "Blob Jr", "Blob Esq"])
            #expect(family.summary.leader == "Blob Sr")
            // The first ID of the incrementing generator: the same rows every run.
            #expect(scoreboard.games.map(\.game.id).contains(UUID(0)))

            let text = try Scorekeeper().scoreboard()
            #expect(text.contains("  Family Game Night         4  Blob Sr (15)"))
        }
    }

    @Test("setting the preview up again while it is open re-seeds without a UNIQUE failure")
    func reseed() throws {
        try withDependencies {
            $0.context = .preview
            try $0.bootstrapDatabase(path: name)
        } operation: {
            @Dependency(\.defaultDatabase) var first
            _ = try Scorekeeper().changeScore(of: "Blob", by: 5)
            // The preview's settings changed: it runs its setup again, with a fresh generator.
            try withDependencies {
                $0.uuid = .incrementing
                try $0.bootstrapDatabase(path: name)
            } operation: {
                @Dependency(\.defaultDatabase) var second
                // Setting up ran the seed again; running it once more shows what it does.
                let again = try withDependencies {
                    $0.uuid = .incrementing
                } operation: {
                    try second.write { db in try SampleData.seed(db) }
                }
                #expect(again.insertedCount == 0)
                #expect(again.skippedCount == 14)
                #expect(try second.read { db in try Player.fetchCount(db) } == 10)
                // The preview's own change survives the re-seed.
                let blob = try second.read { db in try Player.where { $0.name.eq("Blob") }.fetchOne(db) }
                #expect(blob?.score == 17)
            }
        }
    }
}
