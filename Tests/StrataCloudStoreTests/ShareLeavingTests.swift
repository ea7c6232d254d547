import Foundation
import PostgresNIO
import StrataCloud
import Testing

@testable import StrataCloudStore

/// A participant leaving a share: their other devices hear it, and leaving a share the owner
/// ended already changes nothing and succeeds (as MockCloud answers).
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct ShareLeavingTests {
    /// Listens on the store's channel, runs `body`, then sends a marker of its own: PostgreSQL
    /// delivers notifications in commit order, so what `body` announced arrives before the
    /// marker, and what arrives after the marker was never sent. Returns the payloads before it.
    static func announcements(in fixture: StoreFixture, during body: @escaping @Sendable () async throws -> Void) async throws -> [String] {
        let marker = "[\"marker-\(fixture.prefix)\"]"
        return try await fixture.client.withConnection { connection in
            try await connection.listen(on: "strata_cloud") { notifications in
                try await body()
                for try await _ in try await fixture.client.query("SELECT pg_notify('strata_cloud', \(marker))", logger: fixture.logger) {}
                var payloads: [String] = []
                for try await notification in notifications {
                    if notification.payload == marker { break }
                    payloads.append(notification.payload)
                }
                return payloads
            }
        }
    }

    static func sharedWithBob(in fixture: StoreFixture) async throws -> (CloudRecordID, String) {
        let bob = fixture.user("bob")
        let share = try await fixture.aliceSharesARoot(with: bob, permission: .readOnly)
        _ = try await fixture.store.container(for: bob).acceptShare(url: share.url)
        return (share.rootRecordID, bob)
    }

    @Test func aParticipantLeavingIsHeardByTheirDevices() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let (root, bob) = try await Self.sharedWithBob(in: fixture)
        let heard = try await Self.announcements(in: fixture) {
            try await fixture.store.sharedDatabase(of: bob).deleteShare(rootRecordID: root)
        }
        #expect(heard.contains { ChangeListener.users(in: $0)?.contains(bob) ?? true }, "\(heard)")
        #expect(try await fixture.store.sharedDatabase(of: bob).fetchDatabaseChanges(since: nil).changedZones.isEmpty)
    }

    @Test func leavingAShareTheOwnerEndedSucceedsAndAnnouncesNothing() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let (root, bob) = try await Self.sharedWithBob(in: fixture)
        try await fixture.database("alice").deleteShare(rootRecordID: root)
        let heard = try await Self.announcements(in: fixture) {
            try await fixture.store.sharedDatabase(of: bob).deleteShare(rootRecordID: root)
        }
        #expect(!heard.contains { $0.contains(fixture.prefix) }, "\(heard)")
    }
}
