import Foundation
import Strata
import StrataTestSupport
import Testing

@Suite("Commits from other connections", .timeLimit(.minutes(5)))
struct ExternalChangesTests {
    /// A migrated pool on a temporary file, and another connection to the file, as another
    /// process would have: its commits reach no hook of the pool.
    struct SharedFile {
        let folder: TemporaryDirectory
        let watched: DatabasePool
        let other: DatabaseQueue

        init() async throws {
            folder = try TemporaryDirectory()
            let path = folder.url.appendingPathComponent("shared.sqlite").path
            watched = try DatabasePool(path: path)
            try await TestSchema.migrator.migrate(watched)
            other = try DatabaseQueue(path: path)
        }

        func insertElsewhere() async throws {
            try await other.write { db in try Item(id: 1, name: "from elsewhere").insert(db) }
        }
    }

    @Test("pollExternalChanges wakes observers when another connection commits", .timeLimit(.minutes(1)))
    func pollWakesObservers() async throws {
        let file = try await SharedFile()
        defer { file.folder.remove() }
        let poller = Task { try await file.watched.pollExternalChanges(every: .seconds(1), clock: ImmediateClock()) }
        defer { poller.cancel() }
        var iterator = observe(in: file.watched) { db in try Item.fetchCount(db) }.makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        try await file.insertElsewhere()
        // Polling's first tick notifies whatever it reads (for commits made before it began),
        // and may come before the insert: observers then see 0 again before they see 1.
        var value = try await iterator.next()
        while value == 0 { value = try await iterator.next() }
        #expect(value == 1)
    }

    @Test("A commit made before polling started still reaches observers", .timeLimit(.minutes(1)))
    func commitBeforePollingStarted() async throws {
        let file = try await SharedFile()
        defer { file.folder.remove() }
        var iterator = observe(in: file.watched) { db in try Item.fetchCount(db) }.makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        // Committed after the observer fetched but before polling read its first version: no
        // later version differs from the first one polling sees.
        try await file.insertElsewhere()
        let poller = Task { try await file.watched.pollExternalChanges(every: .seconds(1), clock: ImmediateClock()) }
        defer { poller.cancel() }
        #expect(try await iterator.next() == 1)
    }
}
