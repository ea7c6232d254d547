import Foundation
import PostgresNIO
import StrataCloud
import Testing

@testable import StrataCloudStore

/// A statement that fails while it runs fails its request, and the client hears that the
/// request may be sent again: nothing is reported done that PostgreSQL rolled back.
///
/// PostgreSQL reports a failure during a statement that returns rows (`SELECT f(…)`, a lock
/// taken with `SELECT … FOR UPDATE`) after the statement's description, and PostgresNIO hands
/// it over with the rows: a caller that leaves them unread never sees it. The transaction is
/// then aborted, what follows fails the same way, and `COMMIT` answers with a rollback and no
/// error: the request returned success with nothing done.
///
/// Each test holds the owner's user row from a session of its own (every change to a zone or
/// a share moves the owner's database feed, which updates that row), waits until the request
/// queues behind it, and cancels the waiting statement, as `statement_timeout`,
/// `lock_timeout` or an administrator would.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct StatementFailureTests {
    enum Request: String, CaseIterable, Sendable {
        case saveZone, deleteZone, saveShare, deleteShare
    }

    @Test(arguments: Request.allCases)
    func aStatementCancelledWhileItRunsFailsTheRequestAsTemporary(_ request: Request) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let (kept, made) = (fixture.zone("kept", of: "alice"), fixture.zone("made", of: "alice"))
        try await alice.saveZones([kept])
        let root = CloudRecordID(name: "root", zone: kept)
        _ = try await alice.modifyRecords(saving: [CloudRecord(id: root, type: "games")], deleting: [])
        var unsaved = CloudShare(rootRecordID: root, title: "games")
        unsaved.participants.append(CloudShare.Participant(user: fixture.user("bob"), permission: .readOnly))
        let share = request == .deleteShare ? try await alice.saveShare(unsaved) : unsaved
        @Sendable func send() async throws {
            switch request {
            case .saveZone: try await alice.saveZones([made])
            case .deleteZone: try await alice.deleteZones([kept])
            case .saveShare: _ = try await alice.saveShare(share)
            case .deleteShare: try await alice.deleteShare(rootRecordID: root)
            }
        }
        @Sendable func done() async throws -> Bool {
            switch request {
            case .saveZone: try await Self.zoneExists(made, in: fixture)
            case .deleteZone: try await !Self.zoneExists(kept, in: fixture)
            case .saveShare: try await Self.shareExists(root, in: fixture)
            case .deleteShare: try await !Self.shareExists(root, in: fixture)
            }
        }

        let holder = try await RowHolder.hold(
            "SELECT 1 FROM strata_cloud.users WHERE name = \(fixture.user("alice")) FOR SHARE", in: fixture)
        defer { holder.release() }
        let sending = Task { try await send() }
        let waiter = try #require(try await holder.waiter(in: fixture))
        for try await _ in try await fixture.client.query("SELECT pg_cancel_backend(\(waiter))", logger: fixture.logger) {}
        let outcome = await sending.result
        holder.release()
        try await holder.task.value
        switch outcome {
        case .success:
            #expect(try await done(), "\(request) reported success, and PostgreSQL rolled it back")
        case .failure(let error):
            #expect(try await !done(), "\(request) failed, and its change is there")
            #expect((error as? CloudError)?.isTransient == true, "\(request) failed with \(String(reflecting: error).prefix(300))")
            // Sent again, as the client does, it succeeds.
            try await send()
            #expect(try await done())
        }
    }

    static func zoneExists(_ zone: CloudZoneID, in fixture: StoreFixture) async throws -> Bool {
        var found = false
        for try await _ in try await fixture.client.query(
            "SELECT 1 FROM strata_cloud.zones WHERE owner = \(zone.owner) AND name = \(zone.name) AND NOT deleted",
            logger: fixture.logger)
        {
            found = true
        }
        return found
    }

    static func shareExists(_ root: CloudRecordID, in fixture: StoreFixture) async throws -> Bool {
        var found = false
        for try await _ in try await fixture.client.query(
            "SELECT 1 FROM strata_cloud.shares WHERE owner = \(root.zone.owner) AND zone = \(root.zone.name) AND root = \(root.name)",
            logger: fixture.logger)
        {
            found = true
        }
        return found
    }
}
