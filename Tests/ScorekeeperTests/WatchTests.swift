import DependenciesTestSupport
import Foundation
import ScorekeeperCore
import Strata
import StrataTestSupport
import Testing

@Suite(
    "watch", .timeLimit(.minutes(5)),
    .dependencies {
        $0.uuid = .incrementing
        $0.date = .constant(Date(timeIntervalSince1970: 1_767_258_000))
        $0.continuousClock = ImmediateClock()
    })
struct WatchTests {
    @Test("preview: one frame first, then one per scripted change", .timeLimit(.minutes(1)))
    func scripted() async throws {
        let output = OutputRecorder()
        try await withDependencies {
            $0.context = .preview
            try $0.bootstrapDatabase(path: "watch-tests-\(UUID().uuidString)")
        } operation: {
            try await Watch().run(script: WatchStep.previewScript) { output.write($0) }
        }
        let text = output.text
        let frames = text.components(separatedBy: "── Scoreboard").count - 1
        #expect(frames == WatchStep.previewScript.count + 1)
        for step in WatchStep.previewScript {
            #expect(text.contains("▸ \(step.description)"))
        }
        // The last frame shows every change.
        let last = try #require(text.components(separatedBy: "── Scoreboard").last)
        #expect(last.contains("Scrabble Club"))
        #expect(!last.contains("Solo Scrabble"))
        #expect(last.contains("3  Yuki"))
        #expect(!last.contains("Blob Esq"))
        #expect(last.contains("1  Blob Jr     16"))
        #expect(last.contains("Ada        190"))
    }

    @Test("live: a change written by another connection to the file is reprinted", .timeLimit(.minutes(1)))
    func live() async throws {
        let directory = try TemporaryDirectory(prefix: "scorekeeper-tests")
        defer { directory.remove() }
        let databasePath = directory.path("scores.sqlite")
        let output = OutputRecorder()
        try await withDependencies {
            $0.context = .live
            try $0.bootstrapDatabase(path: databasePath)
        } operation: {
            let watch = Task { try await Watch(pollInterval: .milliseconds(10)).run { output.write($0) } }
            defer { watch.cancel() }
            await output.waitFor("No games yet")
            // Another process, as far as SQLite's hooks can tell: its own connection.
            let elsewhere = try DatabaseQueue(path: databasePath)
            try await elsewhere.write { db in
                try Game(id: UUID(), title: "Added elsewhere", createdAt: Date()).insert(db)
            }
            await output.waitFor("Added elsewhere")
            #expect(output.text.contains("── Scoreboard, update 1"))
        }
    }
}
