import Foundation
import Strata
import Testing
import StrataTestSupport

@Suite("Commits from other connections")
struct ExternalChangesTests {
    @Test("pollExternalChanges wakes observers when another connection commits", .timeLimit(.minutes(1)))
    func pollWakesObservers() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("shared.sqlite").path
        let watched = try DatabasePool(path: path)
        try await TestSchema.migrator.migrate(watched)
        // Another connection to the file, as another process would have: its commits reach no
        // hook of `watched`.
        let other = try DatabaseQueue(path: path)

        let poller = Task { try await watched.pollExternalChanges(every: .seconds(1), clock: ImmediateClock()) }
        defer { poller.cancel() }
        let counts = observe(in: watched) { db in try Item.fetchCount(db) }
        var iterator = counts.makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        try await other.write { db in try Item(id: 1, name: "from elsewhere").insert(db) }
        #expect(try await iterator.next() == 1)
    }

    @Test("A commit made before polling started still reaches observers", .timeLimit(.minutes(1)))
    func commitBeforePollingStarted() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("shared.sqlite").path
        let watched = try DatabasePool(path: path)
        try await TestSchema.migrator.migrate(watched)
        let other = try DatabaseQueue(path: path)

        let counts = observe(in: watched) { db in try Item.fetchCount(db) }
        var iterator = counts.makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        // Committed after the observer fetched but before polling read its first version: no
        // later version differs from the first one polling sees.
        try await other.write { db in try Item(id: 1, name: "from elsewhere").insert(db) }
        let poller = Task { try await watched.pollExternalChanges(every: .seconds(1), clock: ImmediateClock()) }
        defer { poller.cancel() }
        #expect(try await iterator.next() == 1)
    }
}
