import Foundation
import StrataQueries
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

/// Outside tests: each zone keeps its own change token, whatever its owner and name spell,
/// and an earlier version's keys are read (owners without a dot) or forgotten (owners with
/// one) as Sync.md says.
@Suite(.timeLimit(.minutes(3))) struct OutsideZoneTokenTests {
    let cloud = MockCloud()
    let time = ManualWallClock()
    let tokens = ZoneTokenLedger()

    func device(_ id: String, user: String, zoneName: String, database: DatabaseQueue? = nil) async throws -> ZoneTestDevice {
        try await ZoneTestDevice(id, user: user, zoneName: zoneName, cloud: cloud, time: time, tokens: tokens, database: database)
    }

    func share(_ device: ZoneTestDevice, _ id: String, with user: String) async throws -> SharedRecord {
        try await device.engine.share(record: OutsideZoneGame(id: id)) { share in
            share.participants.append(CloudShare.Participant(user: user, permission: .readWrite))
        }
    }

    /// Look-alike shapes other than ZoneStateKeyTests': several dots, leading and trailing
    /// dots, doubled dots, unicode, ':' and digits, and a dotted user of her own.
    @Test(arguments: [
        ("alice", "x.y.z.w", "alice.x.y", "z.w"),
        ("alice", "x.y.z.w", "alice.x.y.z", "w"),
        ("alice", ".lead", "alice.", "lead"),
        ("alice", "a..b", "alice.a.", "b"),
        ("alice", "a..b", "alice.a", ".b"),
        ("alice", "trail.", "alice.trail", "."),
        ("alice", "é.ü🎲", "alice.é", "ü🎲"),
        ("alice", "5:x.y", "alice.5:x", "y"),
        ("alice", ":5:x.y", "alice.:5:x", "y"),
        ("al.ice", "x.y", "al.ice.x", "y"),
        ("al.ice", "default", "al", "ice.default"),
        ("a:1", "b.c", "a:1.b", "c"),
        ("alice", "strata.default", ":12:alice.strata", "default"),
    ])
    func lookAlikeZonesKeepTheirOwnTokens(me: String, ownZone: String, otherOwner: String, otherZone: String) async throws {
        let mine = try await device("a1", user: me, zoneName: ownZone)
        let other = try await device("o1", user: otherOwner, zoneName: otherZone)
        try await other.execute("INSERT INTO games (id, title) VALUES ('g-other', 'Chess')")
        try await other.engine.sendChanges()
        let shared = try await share(other, "g-other", with: me)
        try await mine.execute("INSERT INTO games (id, title) VALUES ('g-own', 'Go')")
        try await mine.engine.sendChanges()
        try await mine.engine.acceptShare(shared)
        try await mine.engine.fetchChanges()
        #expect(try await mine.games() == ["g-other Chess", "g-own Go"])

        let second = try await device("a2", user: me, zoneName: ownZone)
        try await second.engine.acceptShare(shared)
        try await second.engine.fetchChanges()
        for round in 1...3 {
            try await second.execute("INSERT INTO games (id, title) VALUES ('g-own-\(round)', 'Shogi')")
            try await second.engine.sendChanges()
            try await other.execute("UPDATE games SET title = 'Chess \(round)' WHERE id = 'g-other'")
            try await other.engine.sendChanges()
            try await mine.execute("UPDATE games SET title = 'Go \(round)' WHERE id = 'g-own'")
            try await mine.engine.sendChanges()
            for device in [mine, second] {
                try await device.engine.fetchChanges()
                #expect(
                    try await device.games()
                        == ["g-other Chess \(round)", "g-own Go \(round)"] + (1...round).map { "g-own-\($0) Shogi" },
                    "\(me) \(ownZone) / \(otherOwner) \(otherZone), round \(round)")
            }
        }
        #expect(tokens.misplaced() == [], "\(me) \(ownZone) / \(otherOwner) \(otherZone)")
    }

    /// Several shared zones at once, all spelling alike in the earlier form.
    @Test func severalLookAlikeSharedZonesAtOnce() async throws {
        let mine = try await device("a1", user: "alice", zoneName: "a.b.c")
        let others = [
            try await device("o1", user: "alice.a", zoneName: "b.c"),
            try await device("o2", user: "alice.a.b", zoneName: "c"),
            try await device("o3", user: "alice.a.b.", zoneName: "c"),
            try await device("o4", user: "bob", zoneName: "a.b.c"),
        ]
        try await mine.execute("INSERT INTO games (id, title) VALUES ('g-own', '0')")
        try await mine.engine.sendChanges()
        for (index, other) in others.enumerated() {
            try await other.execute("INSERT INTO games (id, title) VALUES ('g\(index)', '0')")
            try await other.engine.sendChanges()
            try await mine.engine.acceptShare(try await share(other, "g\(index)", with: "alice"))
        }
        try await mine.engine.fetchChanges()
        for round in 1...4 {
            // Each round, one zone changes alone, then all of them.
            let lone = others[round - 1]
            try await lone.execute("UPDATE games SET title = 'lone \(round)' WHERE id = 'g\(round - 1)'")
            try await lone.engine.sendChanges()
            try await mine.engine.fetchChanges()
            for (index, other) in others.enumerated() {
                try await other.execute("UPDATE games SET title = '\(round)' WHERE id = 'g\(index)'")
                try await other.engine.sendChanges()
            }
            try await mine.execute("UPDATE games SET title = '\(round)' WHERE id = 'g-own'")
            try await mine.engine.sendChanges()
            try await mine.engine.fetchChanges()
            #expect(try await mine.games() == ["g-own \(round)", "g0 \(round)", "g1 \(round)", "g2 \(round)", "g3 \(round)"])
        }
        #expect(tokens.misplaced() == [])
    }

    /// An earlier version's tokens of owners without a dot are still used after the upgrade:
    /// no zone is fetched from the start.
    @Test func earlierTokensOfOwnersWithoutADotAreKept() async throws {
        let alice = try await device("a1", user: "alice", zoneName: "strata.default")
        let bob = try await device("b1", user: "bob", zoneName: "z.1")
        let carol = try await device("c1", user: "carol", zoneName: "default")
        try await alice.execute("INSERT INTO games (id, title) VALUES ('g-own', 'Go')")
        try await alice.engine.sendChanges()
        for (index, other) in [bob, carol].enumerated() {
            try await other.execute("INSERT INTO games (id, title) VALUES ('g\(index)', 'x')")
            try await other.engine.sendChanges()
            try await alice.engine.acceptShare(try await share(other, "g\(index)", with: "alice"))
        }
        try await alice.engine.fetchChanges()
        alice.engine.stop()
        // An earlier version: the same keys, but never checked.
        let stored = try await alice.database.write { db in
            try db.execute(sql: "DELETE FROM strata_sync.state WHERE key LIKE 'keys.%'")
            return try db.fetchAll(sql: "SELECT key, value FROM strata_sync.state WHERE key LIKE 'token.zone%' ORDER BY key") { row in
                "\(try row[0] as String)=\(try row[1] as String)"
            }
        }
        #expect(
            Set(stored.map { String($0.prefix { $0 != "=" }) })
                == ["token.zone.alice.strata.default", "token.zone.bob.z.1", "token.zone.carol.default"], "\(stored)")
        let tokenOf = Dictionary(uniqueKeysWithValues: stored.map { ($0.prefix { $0 != "=" }, String($0.drop { $0 != "=" }.dropFirst())) })
        let second = try await device("a2", user: "alice", zoneName: "strata.default")
        try await second.execute("INSERT INTO games (id, title) VALUES ('g-own-2', 'Shogi')")
        try await second.engine.sendChanges()
        for (index, other) in [bob, carol].enumerated() {
            try await other.execute("UPDATE games SET title = 'y' WHERE id = 'g\(index)'")
            try await other.engine.sendChanges()
        }
        tokens.forgetAsks()
        let upgraded = try await device("a1", user: "alice", zoneName: "strata.default", database: alice.database)
        try await upgraded.engine.fetchChanges()
        #expect(try await alice.games() == ["g-own Go", "g-own-2 Shogi", "g0 y", "g1 y"])
        let asked = tokens.askedFrom
        for (zone, key) in [
            (CloudZoneID(name: "strata.default", owner: "alice"), "token.zone.alice.strata.default"),
            (CloudZoneID(name: "z.1", owner: "bob"), "token.zone.bob.z.1"),
            (CloudZoneID(name: "default", owner: "carol"), "token.zone.carol.default"),
        ] {
            let first = asked.first { $0.zone == zone }
            #expect(first != nil, "\(zone) not fetched: \(asked)")
            #expect(
                first?.token == tokenOf[Substring(key)], "\(zone) fetched from \(String(describing: first?.token)), not its earlier token")
        }
        #expect(tokens.misplaced() == [])
    }

    /// The user's own name has a dot and she holds no record of her own any more (all
    /// deleted), but her zone exists and was fetched last: the earlier version's shared key
    /// `token.zone.alice.strata.default` holds her zone's token, and the zone `strata.default`
    /// of `alice` shared with her spells the same key. Sync.md: "this version forgets the
    /// tokens that a zone of an owner with a dot may have shared with another".
    @Test func anEarlierSharedKeyOfADottedOwnerWithoutRecordsIsForgotten() async throws {
        let me = try await device("x1", user: "alice.strata", zoneName: "default")
        let alice = try await device("a1", user: "alice", zoneName: "strata.default")
        try await alice.execute("INSERT INTO games (id, title) VALUES ('g-a', 'Chess')")
        try await alice.engine.sendChanges()
        try await me.engine.acceptShare(try await share(alice, "g-a", with: "alice.strata"))
        try await me.engine.fetchChanges()
        // Her own zone: a record written and deleted, then fetched alone.
        try await me.execute("INSERT INTO games (id, title) VALUES ('x1', 'Mine')")
        try await me.engine.sendChanges()
        try await me.execute("DELETE FROM games WHERE id = 'x1'")
        try await me.engine.sendChanges()
        try await me.engine.fetchChanges()
        me.engine.stop()
        let ownToken = try await me.database.write { db -> String? in
            let own = try String.fetchOne(db, sql: "SELECT value FROM strata_sync.state WHERE key = 'token.zone:12:alice.stratadefault'")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.metadata WHERE ownerName = 'alice.strata'") == 0)
            // What the earlier version left: one key for both zones, her zone's token last.
            if let own {
                try db.execute(
                    sql: """
                        DELETE FROM strata_sync.state WHERE key LIKE 'token.zone%' OR key LIKE 'keys.%';
                        INSERT INTO strata_sync.state (key, value) VALUES ('token.zone.alice.strata.default', ?)
                        """, arguments: [own])
            }
            return own
        }
        try #require(ownToken != nil, "her own zone's token was not kept")
        try await alice.execute("UPDATE games SET title = 'Chess 2' WHERE id = 'g-a'")
        try await alice.engine.sendChanges()
        let upgraded = try await device("x1", user: "alice.strata", zoneName: "default", database: me.database)
        try await upgraded.engine.fetchChanges()
        #expect(try await me.games() == ["g-a Chess 2"])
        #expect(tokens.misplaced() == [])
    }
}

@Table("games") private struct OutsideZoneGame {
    let id: String
    var title = ""
}
