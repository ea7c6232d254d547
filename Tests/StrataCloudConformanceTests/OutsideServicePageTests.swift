import Foundation
import StrataCloudClient
import StrataCloudService
import StrataCloudWire
import StrataSync
import StrataSyncTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An outside tester's check of the pages the service writes from the stored JSON: every page a
/// client receives over HTTP (whole, and handed over early then read) is the page the store
/// reads into values, record for record, for records holding every kind of value, tombstones,
/// page sizes around the number of changes, and a shared zone read through the shared database.
/// The raw body is JSON, and its head is its token.
@Suite(.enabled(if: CloudKind.postgresURL != nil, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(8)))
struct OutsideServicePageTests {
    static let version = HybridTimestamp(milliseconds: 1_700_000_000_123, counter: 5, node: "dev \"q\" \\ }]")

    /// Awkward texts: JSON's escapes, control characters, non-BMP, separators JavaScript treats
    /// as line ends, and text that looks like the page's own structure.
    static let awkward = [
        "\"", "\\", "}", "]", "\"}]", "\\\"", "tab\tnl\ncr\r", "\u{1}\u{1F}\u{7F}", "𝄞🎲👩‍👩‍👧", "\u{2028}\u{2029}",
        "\"changed\":[],\"token\":{\"value\":\"x\"}", "é\u{301}", "",
    ]

    static func values(_ index: Int) -> [String: CloudValue] {
        let text = awkward[index % awkward.count]
        var fields: [String: CloudValue] = [
            "text": .text("t\(index) \(text)"), "int": .integer([Int64.max, .min, 0, -1, 1 << 53 + 1][index % 5]),
            "real": .real([Double.nan, .infinity, -.infinity, -0.0, 5e-324, 1.7976931348623157e308, 0.1][index % 7]),
            "bytes": .bytes(index % 3 == 0 ? Data() : Data((0..<(index * 7 % 300)).map { UInt8(($0 * 37 + index) % 256) })),
            "nothing": .null,
            "asset": .asset(
                CloudAssetReference(hash: String(repeating: String(format: "%02x", index % 256), count: 32), size: Int64(index) << 33)),
            "key \(text)": .text(text),
        ]
        if index % 4 == 1 { fields = ["only": .integer(Int64(index))] }
        if index % 9 == 8 { fields = [:] }
        return fields
    }

    /// Names with quotes, backslashes, braces and brackets, and the records under a root.
    static func records(in zone: CloudZoneID, count: Int) -> [CloudRecord] {
        let root = CloudRecordID(name: "root\"}]\\:games", zone: zone)
        var records = [CloudRecord(id: root, type: "games", fields: ["title": .text("root")], fieldVersions: ["title": version])]
        for index in 0..<count {
            let text = awkward[index % awkward.count]
            let fields = values(index)
            records.append(
                CloudRecord(
                    id: CloudRecordID(name: "r\(index)\(text):players", zone: zone), type: "players\(index % 3 == 0 ? text : "")",
                    fields: fields, fieldVersions: fields.mapValues { _ in version },
                    parent: index % 2 == 0 ? root : CloudRecordID(name: "r0\(awkward[0]):players", zone: zone)))
        }
        return records
    }

    /// Each record as `CloudRecord`'s JSON: equal texts for equal records, NaN included.
    static func texts(_ records: [CloudRecord]) -> [String] {
        records.map { record in
            var writer = JSONWriter()
            record.write(to: &writer)
            return writer.text
        }
    }

    struct Page: Equatable, CustomStringConvertible {
        var changed: [String]
        var deleted: [CloudTombstone]
        var token: CloudChangeToken
        var moreComing: Bool
        var remainingEstimate: Int?
        init(_ page: CloudZoneChanges) {
            changed = OutsideServicePageTests.texts(page.changed)
            deleted = page.deleted
            token = page.token
            moreComing = page.moreComing
            remainingEstimate = page.remainingEstimate
        }
        var description: String {
            "\(changed.count) changed, \(deleted.count) deleted, \(token), more \(moreComing), est \(String(describing: remainingEstimate))"
        }
    }

    /// The zone's pages of `limit`, from the start, read whole.
    static func walk(_ database: any CloudDatabase, _ zone: CloudZoneID, limit: Int) async throws -> [Page] {
        var pages: [Page] = []
        var token: CloudChangeToken?
        for _ in 0..<2_000 {
            let page = try await database.fetchZoneChanges(zone, since: token, limit: limit)
            pages.append(Page(page))
            token = page.token
            if !page.moreComing { break }
        }
        return pages
    }

    static func walkRecords(_ database: any CloudDatabase, _ zone: CloudZoneID) async throws -> [[CloudRecord]] {
        var pages: [[CloudRecord]] = []
        var token: CloudChangeToken?
        for _ in 0..<2_000 {
            let page = try await database.fetchZoneChanges(zone, since: token, limit: 1_000)
            pages.append(page.changed)
            token = page.token
            if !page.moreComing { break }
        }
        return pages
    }

    /// The same, handed over early: the head must be the page's own token and `moreComing`.
    static func walkArriving(_ database: any CloudDatabase, _ zone: CloudZoneID, limit: Int) async throws -> [Page] {
        var pages: [Page] = []
        var token: CloudChangeToken?
        for _ in 0..<2_000 {
            let arriving = try await database.fetchArrivingZoneChanges(zone, since: token, limit: limit)
            let page = try await arriving.changes()
            #expect(arriving.token == page.token)
            #expect(arriving.moreComing == page.moreComing)
            pages.append(Page(page))
            token = arriving.token
            if !arriving.moreComing { break }
        }
        return pages
    }

    /// The raw body of one `fetchZoneChanges` over HTTP.
    static func rawPage(
        _ cloud: TestCloud, user: String, scope: CloudDatabaseScope, _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int
    ) async throws -> Data {
        let base = try #require(cloud.service?.baseURL)
        var request = URLRequest(url: base.appendingPathComponent(CloudRoute.database(scope, .fetchZoneChanges)))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(
            "Bearer \(try await CloudServiceTokens.issue(user: user, key: TestCloud.serviceKey))", forHTTPHeaderField: "Authorization")
        request.httpBody = try CloudWire.encode(FetchZoneChangesRequest(zone: zone, since: token, limit: limit))
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: data.prefix(300), as: UTF8.self))")
        return data
    }

    /// Every way through the service against the store read directly, at `limits`.
    static func compare(
        _ cloud: TestCloud, user: String, scope: CloudDatabaseScope, _ zone: CloudZoneID, limits: [Int], expectedChanges: Int
    ) async throws {
        let store = try #require(cloud.store)
        let direct = scope == .private ? store.container(for: user).privateDatabase : store.container(for: user).sharedDatabase
        let client = cloud.container(user: user)
        let http = scope == .private ? client.privateDatabase : client.sharedDatabase
        for limit in limits {
            // The service serves at most its maximum a page (2,000 by default, Cloud.md); the
            // store read directly clamps at 10,000.
            let expected = try await walk(direct, zone, limit: min(limit, 2_000))
            let changes = expected.reduce(0) { $0 + $1.changed.count + $1.deleted.count }
            #expect(changes == expectedChanges, "limit \(limit)")
            let whole = try await walk(http, zone, limit: limit)
            let early = try await walkArriving(http, zone, limit: limit)
            #expect(whole.count == expected.count, "limit \(limit): \(whole.count) pages over HTTP, \(expected.count) from the store")
            #expect(early.count == expected.count, "limit \(limit)")
            for (index, page) in expected.enumerated() {
                for (name, got) in [("whole", whole), ("early", early)] where index < got.count && got[index] != page {
                    let other = got[index]
                    let differing = zip(other.changed, page.changed).enumerated().first { $0.element.0 != $0.element.1 }
                    Issue.record(
                        """
                        limit \(limit) page \(index) (\(name)) differs: \(other) vs store \(page)
                        first differing record: \(differing.map { "HTTP \($0.element.0)\nstore \($0.element.1)" } ?? "none")
                        """)
                }
            }
            // Raw bodies: JSON, their head their token, read as the store's page.
            var token: CloudChangeToken?
            for page in expected {
                let body = try await rawPage(cloud, user: user, scope: scope, zone, since: token, limit: limit)
                #expect(
                    (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] != nil,
                    "limit \(limit): the body is not JSON: \(String(decoding: body.prefix(500), as: UTF8.self))")
                let head = ZoneChangesResponse.head(of: body)
                #expect(head?.token == page.token && head?.moreComing == page.moreComing, "limit \(limit)")
                let decoded = try CloudWire.decode(ZoneChangesResponse.self, from: body).changes
                #expect(Page(decoded) == page, "limit \(limit)")
                token = page.token
            }
        }
    }

    /// Alice's zone of 31 records saved in a few requests, 4 of them deleted and 2 edited after:
    /// 27 records and 4 tombstones. Answers the zone and the records as last saved.
    static func seedPrivateZone(_ cloud: TestCloud) async throws -> (zone: CloudZoneID, saved: [String: CloudRecord]) {
        let store = try #require(cloud.store)
        let zone = CloudZoneID(name: "games", owner: "alice")
        let alice = store.container(for: "alice").privateDatabase
        try await alice.saveZones([zone])
        let records = Self.records(in: zone, count: 30)
        // In a few requests, so positions differ; then deletions and edits move records.
        for chunk in stride(from: 0, to: records.count, by: 7) {
            let result = try await alice.modifyRecords(saving: Array(records[chunk..<min(chunk + 7, records.count)]), deleting: [])
            for (id, outcome) in result.saveResults { #expect((try? outcome.get()) != nil, "save \(id.name): \(outcome)") }
        }
        let gone = [records[5].id, records[12].id, records[21].id, records[30].id]
        let deletion = try await alice.modifyRecords(saving: [], deleting: gone)
        for (id, outcome) in deletion.deleteResults { #expect((try? outcome.get()) != nil, "delete \(id.name)") }
        let held = try await alice.fetchRecords([records[3].id, records[8].id])
        var edits: [CloudRecord] = []
        for id in [records[3].id, records[8].id] {
            var record = try #require(try held[id]?.get())
            record.fields["text"] = .text("edited \\\" }] 🎲")
            record.fieldVersions["text"] = Self.version
            edits.append(record)
        }
        let edit = try await alice.modifyRecords(saving: edits, deleting: [])
        for (id, outcome) in edit.saveResults { #expect((try? outcome.get()) != nil, "edit \(id.name): \(outcome)") }
        var saved = Dictionary((records + edits).map { ($0.id.name, $0) }, uniquingKeysWith: { $1 })
        for id in gone { saved[id.name] = nil }
        return (zone, saved)
    }

    @Test func privateZonePagesAreTheStoresPages() async throws {
        try await CloudKind.service.run {
            let cloud = TestCloud.current
            let (zone, _) = try await Self.seedPrivateZone(cloud)
            let changes = 31  // 27 records and 4 tombstones
            try await Self.compare(
                cloud, user: "alice", scope: .private, zone, limits: [1, 2, 3, changes - 1, changes, changes + 1, 1_000],
                expectedChanges: changes)
        }
    }

    /// What a client reads over HTTP is what was saved, every value as it was. (The pages are
    /// the store's, as the test above checks: a difference here is the store's JSON's.)
    @Test func savedValuesComeBackAsSaved() async throws {
        try await CloudKind.service.run {
            let cloud = TestCloud.current
            let (zone, saved) = try await Self.seedPrivateZone(cloud)
            var read: [String: CloudRecord] = [:]
            for page in try await Self.walkRecords(cloud.container(user: "alice").privateDatabase, zone) {
                for record in page { read[record.id.name] = record }
            }
            #expect(Set(read.keys) == Set(saved.keys))
            for (name, record) in read {
                guard var expected = saved[name] else { continue }
                expected.changeTag = record.changeTag
                // Negative zero is zero in PostgreSQL's `jsonb` numbers, as in SQLite's REAL
                // columns (a device stores `-0.0` as `0.0` too): the one value that does not
                // come back bit for bit, by both stores' design.
                for (key, value) in expected.fields {
                    if case .real(let real) = value, real == 0, real.sign == .minus { expected.fields[key] = .real(0) }
                }
                #expect(Self.texts([record]) == Self.texts([expected]), "\(name) changed on the way")
            }
        }
    }

    @Test func sharedZonePagesAreTheStoresPages() async throws {
        try await CloudKind.service.run {
            let cloud = TestCloud.current
            let store = try #require(cloud.store)
            let zone = CloudZoneID(name: "shared \"z\" \\ }]", owner: "alice")
            let alice = store.container(for: "alice").privateDatabase
            try await alice.saveZones([zone])
            let records = Self.records(in: zone, count: 12)
            let result = try await alice.modifyRecords(saving: records, deleting: [])
            for (id, outcome) in result.saveResults { #expect((try? outcome.get()) != nil, "save \(id.name): \(outcome)") }
            var share = CloudShare(rootRecordID: records[0].id, title: "t")
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
            share = try await alice.saveShare(share)
            _ = try await cloud.container(user: "bob").acceptShare(url: share.url(inviting: .readWrite))
            // Bob writes through the shared database too, and deletes one.
            let bob = store.container(for: "bob").sharedDatabase
            let bobs = CloudRecord(
                id: CloudRecordID(name: "bob's \"}]\\:players", zone: zone), type: "players", fields: Self.values(2),
                fieldVersions: Self.values(2).mapValues { _ in Self.version }, parent: records[0].id)
            let saved = try await bob.modifyRecords(saving: [bobs], deleting: [records[4].id])
            for (id, outcome) in saved.saveResults { #expect((try? outcome.get()) != nil, "bob's save \(id.name): \(outcome)") }
            for (id, outcome) in saved.deleteResults { #expect((try? outcome.get()) != nil, "bob's delete \(id.name): \(outcome)") }
            let direct = try await Self.walk(bob, zone, limit: 1_000)
            let changes = direct.reduce(0) { $0 + $1.changed.count + $1.deleted.count }
            #expect(changes >= 2)
            try await Self.compare(
                cloud, user: "bob", scope: .shared, zone, limits: [1, 2, changes - 1, changes, changes + 1, 1_000], expectedChanges: changes
            )
        }
    }

    /// Many changes: pages of 2,000 and the service's ceiling, and page sizes one under and one
    /// over it.
    @Test func aLargeZoneAtTheCeiling() async throws {
        try await CloudKind.service.run {
            let cloud = TestCloud.current
            let store = try #require(cloud.store)
            let zone = CloudZoneID(name: "big", owner: "alice")
            let alice = store.container(for: "alice").privateDatabase
            try await alice.saveZones([zone])
            let records = Self.records(in: zone, count: 2_400)
            for chunk in stride(from: 0, to: records.count, by: 200) {
                let result = try await alice.modifyRecords(saving: Array(records[chunk..<min(chunk + 200, records.count)]), deleting: [])
                #expect(result.saveResults.values.allSatisfy { (try? $0.get()) != nil })
            }
            try await Self.compare(
                cloud, user: "alice", scope: .private, zone, limits: [1_999, 2_000, 2_001], expectedChanges: records.count)
        }
    }
}

/// Engines through the real service on PostgreSQL, in small pages (each handed over early by
/// the HTTP client and read while the next travels), with children ahead of their parents in
/// the feed (the parents edited after them) and tombstones: the receiver ends with the sender's
/// rows, encrypted or not.
@Suite(.enabled(if: CloudKind.postgresURL != nil, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(8)))
struct OutsideEngineThroughServicePagesTests {
    @Test(arguments: [SyncEncryption.disabled, .endToEnd], [1, 2, 3, 7])
    func smallPagesWithChildrenFirst(encryption: SyncEncryption, pageSize: Int) async throws {
        try await CloudKind.service.run {
            let cloud = TestCloud.current
            var random = SeededGenerator(state: UInt64(pageSize))
            let sender = try await SyncTestDevice("a", container: cloud.container(user: "alice"), encryption: encryption)
            for game in 0..<5 { try await sender.execute("INSERT INTO games (id, title) VALUES ('g\(game)', 'G \(game)')") }
            for player in 0..<10 {
                let game = Int.random(in: 0..<5, using: &random)
                try await sender.execute("INSERT INTO players (id, gameID, name) VALUES ('p\(player)', 'g\(game)', 'P \(player) \"}]\\')")
            }
            try await sender.engine.sendChanges()
            // The games edited after their players: in the feed, every player comes first.
            try await sender.execute("UPDATE games SET title = title || ' edited', score = 1")
            try await sender.engine.sendChanges()
            try await sender.execute("DELETE FROM players WHERE id IN ('p3', 'p7')")
            try await sender.engine.sendChanges()
            #expect(try await sender.pending() == 0)

            let receiver = try await SyncTestDevice(
                "b", container: cloud.container(user: "alice"), fetchPageSize: pageSize, encryption: encryption)
            try await receiver.engine.fetchChanges()
            #expect(try await receiver.rows() == sender.rows())
            // And again after more edits, from the saved token.
            try await sender.execute("UPDATE players SET name = 'renamed' WHERE id IN ('p0', 'p1', 'p2')")
            try await sender.execute("INSERT INTO games (id, title) VALUES ('g9', 'late')")
            try await sender.execute("UPDATE players SET gameID = 'g9' WHERE id = 'p4'")
            try await sender.engine.sendChanges()
            try await receiver.engine.fetchChanges()
            #expect(try await receiver.rows() == sender.rows())
        }
    }
}
