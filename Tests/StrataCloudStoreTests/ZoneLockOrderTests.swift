import Foundation
import PostgresNIO
import StrataCloud
import Testing

@testable import StrataCloudStore

/// Every request that holds more than one lock takes them in one order: the zones' rows by the
/// bytes of their names, then what hangs off a zone (its shares). Two requests taking the same
/// two rows in opposite orders deadlock: PostgreSQL breaks the cycle only after
/// `deadlock_timeout` (1 s by default) by failing one of them, which the client sees as a
/// temporary failure and sends again.
///
/// Each test holds the row a request needs first from a session of its own, waits until the
/// request is queued behind it, and then asks, without waiting (`NOWAIT`), for the row the
/// request needs next: a request that took its locks out of order already holds it.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct ZoneLockOrderTests {
    /// Pairs of zone names, the one whose bytes come first first. `"e\u{301}"` (a combining
    /// accent) sorts before `"f"` by bytes, as PostgreSQL compares keys, but after it by
    /// Swift's `<`, which compares canonical forms (`"é"`).
    static let namePairs: [(String, String)] = [("a", "b"), ("B", "a"), ("e\u{301}", "f"), ("f", "\u{E9}"), ("a", "a!")]

    @Test(arguments: 0..<namePairs.count)
    func savingZonesNamedInAnyOrderLocksThemByTheirBytes(pair: Int) async throws {
        let (first, second) = Self.namePairs[pair]
        try await expectLockOrder(first: first, second: second) { alice, zones in try await alice.saveZones(zones) }
    }

    @Test(arguments: 0..<namePairs.count)
    func deletingZonesNamedInAnyOrderLocksThemByTheirBytes(pair: Int) async throws {
        let (first, second) = Self.namePairs[pair]
        try await expectLockOrder(first: first, second: second) { alice, zones in try await alice.deleteZones(zones) }
    }

    /// Accepting a share takes the zone's row before the share's, as the owner's writes do
    /// (saving or deleting the share, deleting its root, deleting the zone).
    @Test func acceptingAShareLocksTheZoneBeforeTheShare() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let participant = fixture.user("bob")
        let share = try await fixture.aliceSharesARoot(with: participant)
        let (root, zone) = (share.rootRecordID, share.rootRecordID.zone)

        let holder = try await RowHolder.hold(LockProbe.zoneRow(zone), in: fixture)
        defer { holder.release() }
        let accepting = Task { try await fixture.store.container(for: participant).acceptShare(url: share.url) }
        try await holder.waitUntilSomeoneWaits(in: fixture)
        let shareRow: PostgresQuery =
            "SELECT 1 FROM strata_cloud.shares WHERE owner = \(zone.owner) AND zone = \(zone.name) AND root = \(root.name) FOR UPDATE NOWAIT"
        #expect(try await LockProbe.canLock(shareRow, in: fixture), "accept_share holds the share while it waits for the zone")
        holder.release()
        let accepted = try await accepting.value
        #expect(accepted.participants.contains { $0.user == participant && $0.acceptance == .accepted })
    }

    /// A URL naming no share is refused without waiting for the zone it names: a stranger
    /// cannot hold another user's zone by asking to join what is not shared. (Before, the
    /// request waited here for the held zone.)
    @Test func acceptingAShareThatIsNotThereTakesNoLock() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let share = try await fixture.aliceSharesARoot(with: fixture.user("bob"))
        let unshared = CloudShare(rootRecordID: CloudRecordID(name: "other", zone: share.rootRecordID.zone))
        let holder = try await RowHolder.hold(LockProbe.zoneRow(share.rootRecordID.zone), in: fixture)
        defer { holder.release() }
        await #expect(throws: CloudError.self) {
            _ = try await fixture.store.container(for: fixture.user("mallory")).acceptShare(url: unshared.url)
        }
    }

    /// Zones `first` and `second` exist; `first` is held elsewhere; `request` names them in the
    /// opposite order and must wait for `first` without holding `second`.
    private func expectLockOrder(
        first: String, second: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ request: @escaping @Sendable (CloudStoreDatabase, [CloudZoneID]) async throws -> Void
    ) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let (firstZone, secondZone) = (fixture.zone(first, of: "alice"), fixture.zone(second, of: "alice"))
        try await alice.saveZones([firstZone, secondZone])
        let holder = try await RowHolder.hold(LockProbe.zoneRow(firstZone), in: fixture)
        defer { holder.release() }
        let requesting = Task { try await request(alice, [secondZone, firstZone]) }
        try await holder.waitUntilSomeoneWaits(in: fixture)
        let secondIsFree = try await LockProbe.canLock(LockProbe.zoneRow(secondZone, nowait: true), in: fixture)
        holder.release()
        try await requesting.value
        #expect(secondIsFree, "zone \"\(second)\" was locked while the request waited for \"\(first)\"", sourceLocation: sourceLocation)
    }

}
