import Foundation
import StrataQueries
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

/// The engine keeps a change token and a "zone created" mark per zone. A zone is named by its
/// owner and its name, and both may hold dots: alice's own zone `strata.default` and the zone
/// `default` of a user called `alice.strata` are two zones and keep two tokens. Were they one,
/// the fetch of either zone would go on from the other's position and skip every change of
/// its own in between.
@Suite(.timeLimit(.minutes(2))) struct ZoneStateKeyTests {
    let cloud = MockCloud()
    let time = ManualWallClock()
    let tokens = ZoneTokenLedger()

    func device(_ id: String, user: String, zoneName: String) async throws -> ZoneTestDevice {
        try await ZoneTestDevice(id, user: user, zoneName: zoneName, cloud: cloud, time: time, tokens: tokens)
    }

    /// Alice's own zone, and another user's zone whose owner and name, joined by a dot, spell
    /// the same text as hers.
    @Test(arguments: [
        ("strata.default", "alice.strata", "default"),
        ("a.b.c", "alice.a.b", "c"),
        ("a.b.c", "alice.a", "b.c"),
    ])
    func zonesWhoseNamesSpellAlikeKeepTheirOwnTokens(ownZone: String, otherOwner: String, otherZone: String) async throws {
        let alice = try await device("a1", user: "alice", zoneName: ownZone)
        let other = try await device("o1", user: otherOwner, zoneName: otherZone)

        // The other zone's record is older than alice's: a fetch of that zone going on from
        // alice's token would find nothing.
        try await other.execute("INSERT INTO games (id, title) VALUES ('g-other', 'Chess')")
        try await other.engine.sendChanges()
        let shared = try await other.engine.share(record: ZoneStateGame(id: "g-other")) { share in
            share.participants.append(CloudShare.Participant(user: "alice", permission: .readWrite))
        }
        try await alice.execute("INSERT INTO games (id, title) VALUES ('g-own', 'Go')")
        try await alice.engine.sendChanges()
        try await alice.engine.acceptShare(shared)
        try await alice.engine.fetchChanges()
        #expect(try await alice.games() == ["g-other Chess", "g-own Go"])

        // Later changes of both zones arrive, whichever zone is fetched first: alice's other
        // device writes first, so a fetch of her zone going on from the other zone's newer
        // position would skip it.
        let second = try await device("a2", user: "alice", zoneName: ownZone)
        try await second.engine.acceptShare(shared)
        try await second.engine.fetchChanges()
        try await second.execute("INSERT INTO games (id, title) VALUES ('g-own-2', 'Shogi')")
        try await second.engine.sendChanges()
        try await other.execute("UPDATE games SET title = 'Chess 2' WHERE id = 'g-other'")
        try await other.engine.sendChanges()
        for device in [alice, second] {
            try await device.engine.fetchChanges()
            #expect(try await device.games() == ["g-other Chess 2", "g-own Go", "g-own-2 Shogi"])
        }
        try await alice.execute("UPDATE games SET title = 'Go 2' WHERE id = 'g-own'")
        try await alice.engine.sendChanges()
        try await other.execute("UPDATE games SET title = 'Chess 3' WHERE id = 'g-other'")
        try await other.engine.sendChanges()
        for device in [alice, second] {
            try await device.engine.fetchChanges()
            #expect(try await device.games() == ["g-other Chess 3", "g-own Go 2", "g-own-2 Shogi"])
        }
        // Every fetch of a zone went on from a token that zone issued.
        #expect(tokens.misplaced() == [])
    }

    /// A metadatabase an earlier version wrote holds one token for both zones, under the key
    /// they shared, and alice's own zone still reads that key. Neither zone can trust it: both
    /// are fetched from the start once.
    @Test func anEarlierVersionsSharedTokenIsForgotten() async throws {
        let alice = try await device("a1", user: "alice", zoneName: "strata.default")
        let other = try await device("o1", user: "alice.strata", zoneName: "default")
        try await other.execute("INSERT INTO games (id, title) VALUES ('g-other', 'Chess')")
        try await other.engine.sendChanges()
        let shared = try await other.engine.share(record: ZoneStateGame(id: "g-other")) { share in
            share.participants.append(CloudShare.Participant(user: "alice", permission: .readWrite))
        }
        try await alice.engine.acceptShare(shared)
        try await alice.engine.fetchChanges()
        alice.engine.stop()
        // What the earlier version left: the shared key, here holding a token past every
        // change (from it, a fetch finds nothing), and no key of the new form.
        try await alice.database.write { db in
            try db.execute(
                sql: """
                    DELETE FROM strata_sync.state WHERE key LIKE 'token.zone%' OR key LIKE 'keys.%';
                    INSERT INTO strata_sync.state (key, value) VALUES ('token.zone.alice.strata.default', 'z:999999:0:0')
                    """)
        }
        try await other.execute("UPDATE games SET title = 'Chess 2' WHERE id = 'g-other'")
        try await other.engine.sendChanges()
        let second = try await device("a2", user: "alice", zoneName: "strata.default")
        try await second.execute("INSERT INTO games (id, title) VALUES ('g-own', 'Go')")
        try await second.engine.sendChanges()

        let configuration = SyncEngineConfiguration(deviceID: "a1", zoneName: "strata.default", schedule: nil, encryption: .disabled)
        let container = tokens.checking(cloud.container(user: "alice"))
        let database = alice.database
        let upgraded = try await runOnBackgroundThread { [configuration] in
            try SyncEngine(
                for: database, tableNames: SyncTestDevice.tableNames, container: container, configuration: configuration,
                startImmediately: false)
        }
        upgraded.start()
        try await upgraded.fetchChanges()
        #expect(try await alice.games() == ["g-other Chess 2", "g-own Go"])
    }
}

/// Which zone issued each change token, and every token a zone was asked from that another
/// zone issued.
final class ZoneTokenLedger: Sendable {
    private let state = Mutex<(issuedBy: [String: CloudZoneID], misplaced: [String])>(([:], []))
    private let asks = Mutex<[(zone: CloudZoneID, token: String?)]>([])

    /// Every zone fetch since the last ``forgetAsks()``: the zone and the token it went on from.
    var askedFrom: [(zone: CloudZoneID, token: String?)] { asks.withLock { $0 } }

    func forgetAsks() { asks.withLock { $0 = [] } }

    func asked(_ zone: CloudZoneID, since token: CloudChangeToken?) {
        asks.withLock { $0.append((zone, token?.value)) }
        guard let token else { return }
        state.withLock { state in
            if let issuer = state.issuedBy[token.value], issuer != zone {
                state.misplaced.append("\(zone) asked from \(token.value), a token of \(issuer)")
            }
        }
    }

    func issued(_ token: CloudChangeToken, by zone: CloudZoneID) {
        state.withLock { state in
            // Two zones may issue equal texts (the position is the cloud's, not the zone's):
            // such a token proves nothing either way.
            if let issuer = state.issuedBy[token.value], issuer != zone {
                state.issuedBy[token.value] = CloudZoneID(name: "", owner: "")
            } else {
                state.issuedBy[token.value] = zone
            }
        }
    }

    func misplaced() -> [String] {
        state.withLock { state in state.misplaced.filter { !$0.hasSuffix("a token of (owner: , name: )") } }
    }
}

extension ZoneTokenLedger {
    /// A container over `base` whose zone fetches, in both databases, report their tokens here
    /// (first pages are not forwarded: every page comes from a zone fetch).
    func checking(_ base: any CloudContainer) -> InterceptingContainer {
        InterceptingContainer(
            base: base, modify: { saving, deleting, next in try await next.modifyRecords(saving: saving, deleting: deleting) },
            fetchZone: { zone, token, limit, next in
                self.asked(zone, since: token)
                let page = try await next.fetchZoneChanges(zone, since: token, limit: limit)
                self.issued(page.token, by: zone)
                return page
            },
            interceptsSharedDatabase: true)
    }
}

/// A device whose engine syncs its own zone `zoneName` (encryption off, no schedule), its
/// zone fetches checked by a ``ZoneTokenLedger``.
struct ZoneTestDevice {
    let database: DatabaseQueue
    let engine: SyncEngine
    let time: ManualWallClock

    /// A device of `user` on `database` (a new in-memory one by default; the games and players
    /// tables are created when missing), started.
    init(
        _ id: String, user: String, zoneName: String, cloud: MockCloud, time: ManualWallClock, tokens: ZoneTokenLedger,
        database: DatabaseQueue? = nil
    ) async throws {
        let database = try database ?? DatabaseQueue()
        let hasTables = try await database.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'games')") ?? false
        }
        if !hasTables { try await database.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) } }
        var configuration = SyncEngineConfiguration(deviceID: id, zoneName: zoneName, schedule: nil, encryption: .disabled)
        configuration.physicalTime = time.read
        let container = tokens.checking(cloud.container(user: user))
        let engine = try await runOnBackgroundThread { [configuration] in
            try SyncEngine(
                for: database, tableNames: SyncTestDevice.tableNames, container: container, configuration: configuration,
                startImmediately: false)
        }
        engine.start()
        (self.database, self.engine, self.time) = (database, engine, time)
    }

    func execute(_ sql: String) async throws {
        time.advance()
        try await database.write { db in try db.execute(sql: sql) }
    }

    func games() async throws -> [String] {
        try await database.read { db in try String.fetchAll(db, sql: "SELECT id || ' ' || title FROM games ORDER BY id") }
    }
}

@Table("games") private struct ZoneStateGame {
    let id: String
    var title = ""
}
