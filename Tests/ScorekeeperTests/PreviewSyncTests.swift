import Clocks
import DependenciesTestSupport
import Foundation
import ScorekeeperCore
import Strata
import Testing

@Suite(
    "Preview mode syncs through the mock cloud", .timeLimit(.minutes(5)),
    .dependencies {
        $0.uuid = .incrementing
        $0.date = .constant(Date(timeIntervalSince1970: 1_767_258_000))
        // The preview engine's schedule runs on this clock: it never moves, so only the test syncs.
        $0.continuousClock = TestClock()
    })
struct PreviewSyncTests {
    let name = "scorekeeper-preview-sync-tests-\(UUID().uuidString)"

    @Test("the seeded games and players go to the preview cloud, and so does a change")
    func seededDataAndChangesSync() async throws {
        try await withDependencies {
            $0.context = .preview
            try $0.bootstrapDatabase(path: name)
            try $0.bootstrapSyncEngine()
        } operation: {
            let keeper = Scorekeeper()
            #expect(try await keeper.previewSyncSummary() == "Preview sync: 4 games, 10 players in the in-memory cloud, 0 pending.")
            _ = try keeper.addGame(title: "Chess")
            @Dependency(\.defaultSyncEngine) var engine
            #expect(try await engine.pendingCount() == 1)
            #expect(try await keeper.previewSyncSummary() == "Preview sync: 5 games, 10 players in the in-memory cloud, 0 pending.")
            engine.stop()
        }
    }
}
