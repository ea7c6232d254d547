import Foundation
import PostgresNIO
import StrataCloud
import Synchronization
import Testing

@testable import StrataCloudStore

/// Change tokens are positions that commit in order: a reader never skips a change because a
/// writer that took a lower position committed after one that took a higher position.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(5)))
struct CloudStoreOrderingTests {
    /// The outbox gap, staged: writer A holds its transaction open after writing, writer B
    /// writes the same zone, a reader fetches in between and after. With positions from a
    /// sequence, B would commit position 2 while A still held 1; the reader would save "2" and
    /// never see A's record. Here B waits for A's zone lock, so the reader sees both.
    @Test func aReaderNeverSkipsAWriterThatCommitsLate() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        let start = try await alice.fetchZoneChanges(zone, since: nil, limit: 100).token

        // Only the first writer waits.
        let writeA = fixture.holdNextWriteBeforeCommit()
        let record: @Sendable (String) -> CloudRecord = { CloudRecord(id: CloudRecordID(name: $0, zone: zone), type: "games") }
        let writerA = Task {
            defer { writeA.holding.finish() }
            return try await alice.modifyRecords(saving: [record("a")], deleting: [])
        }
        guard await writeA.waitUntilHeld() else {
            Issue.record("writer A never reached its commit: \(String(describing: await writerA.result))")
            return
        }
        let writerB = Task { try await alice.modifyRecords(saving: [record("b")], deleting: []) }
        try await fixture.waitUntilSomeoneWaitsForALock()

        let during = try await alice.fetchZoneChanges(zone, since: start, limit: 100)
        #expect(during.changed.isEmpty)

        writeA.release.yield()
        _ = try await writerA.value
        _ = try await writerB.value
        let after = try await alice.fetchZoneChanges(zone, since: during.token, limit: 100)
        #expect(after.changed.map(\.id.name) == ["a", "b"])
    }

    /// Many writers, one reader following the feed the whole time: every record arrives.
    @Test func aReaderFollowingConcurrentWritersSeesEveryRecord() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        let writers = 4
        let perWriter = 15
        let done = Atomic(false)
        let writing = Task {
            defer { done.store(true, ordering: .sequentiallyConsistent) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        for index in 0..<perWriter {
                            let id = CloudRecordID(name: "w\(writer)-\(index)", zone: zone)
                            _ = try await alice.modifyRecords(saving: [CloudRecord(id: id, type: "games")], deleting: [])
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        var seen: Set<String> = []
        var token: CloudChangeToken?
        while true {
            // A fetch that starts after the last write and reaches the end has seen it all.
            let writersDone = done.load(ordering: .sequentiallyConsistent)
            let page = try await alice.fetchZoneChanges(zone, since: token, limit: 7)
            seen.formUnion(page.changed.map(\.id.name))
            token = page.token
            if writersDone && !page.moreComing { break }
        }
        try await writing.value
        #expect(seen.count == writers * perWriter)
    }
}
