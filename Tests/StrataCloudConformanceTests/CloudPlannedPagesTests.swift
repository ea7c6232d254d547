import Foundation
import StrataSync
import StrataSyncTestSupport
import Testing

/// Planned page starts (`CloudZoneChanges.followingTokens`, issue #27): a page tells where the
/// pages after the next one start, so a device asks for several at once on a long link. On
/// every cloud: the starts are those the chain of pages reaches; a page fetched from one is the
/// chained page; whatever changes after the planning, no change falls between two pages.
@Suite(.timeLimit(.minutes(5))) struct CloudPlannedPagesTests {
    var cloud: TestCloud { TestCloud.current }
    let zone = CloudZoneID(name: "zone", owner: "alice")
    var database: any CloudDatabase { cloud.container(user: "alice").privateDatabase }

    func record(_ name: String, _ value: Int = 0) -> CloudRecord {
        CloudRecord(id: CloudRecordID(name: name, zone: zone), type: "games", fields: ["score": .integer(Int64(value))])
    }

    /// Saves `names` in requests of at most 100, and deletes every `deleteEvery`-th after
    /// (tombstones between the records of the feed).
    func fill(_ names: [String], deleteEvery: Int = 0) async throws {
        try await database.saveZones([zone])
        for start in stride(from: 0, to: names.count, by: 100) {
            _ = try await database.modifyRecords(saving: names[start..<min(start + 100, names.count)].map { record($0) }, deleting: [])
        }
        guard deleteEvery > 0 else { return }
        let gone = names.enumerated().filter { $0.offset % deleteEvery == deleteEvery - 1 }.map {
            CloudRecordID(name: $0.element, zone: zone)
        }
        _ = try await database.modifyRecords(saving: [], deleting: gone)
    }

    /// Every page of the zone after `token`, one after another.
    func chain(since token: CloudChangeToken?, limit: Int) async throws -> [CloudZoneChanges] {
        var pages: [CloudZoneChanges] = []
        var token = token
        while true {
            let page = try await database.fetchZoneChanges(zone, since: token, limit: limit)
            pages.append(page)
            token = page.token
            if !page.moreComing || pages.count > 500 { return pages }
        }
    }

    /// The changes of `pages` applied in order: each record's last state (its tag), or nil
    /// for a deleted one.
    static func applied(_ pages: [CloudZoneChanges]) -> [String: String?] {
        var state: [String: String?] = [:]
        for page in pages {
            for tombstone in page.deleted { state[tombstone.id.name] = .some(nil) }
            for record in page.changed { state[record.id.name] = .some(record.changeTag) }
        }
        return state
    }

    /// With nothing changing, the starts a first page plans are the tokens the chain of pages
    /// gives (the start of page *k* + 2 is page *k* + 1's token), as many as asked for and as
    /// pages follow with changes in them, and a page asked from one is the chained page.
    @Test(arguments: CloudKind.available, [1, 2, 3, 7, 40, 57, 58])
    func theStartsAreTheChainsTokens(_ kind: CloudKind, limit: Int) async throws {
        try await kind.run {
            let names = (0..<57).map { String(format: "r%03d", $0) }
            try await fill(names, deleteEvery: 5)
            let chained = try await chain(since: nil, limit: limit)
            for planned in [0, 1, 2, CloudZonePageRequest.maximumPlannedPages, 9] {
                let first = try await database.fetchArrivingZoneChanges(zone, since: nil, limit: limit, plannedPages: planned)
                let bounded = min(planned, CloudZonePageRequest.maximumPlannedPages)
                // Page k + 2 starts where page k + 1 ended; a start is planned only when a page
                // with changes follows it.
                let expected = Array(chained.dropFirst().dropLast().prefix(bounded).map(\.token))
                #expect(first.followingTokens == expected, "limit \(limit), \(planned) planned")
                #expect(first.token == chained[0].token)
                for (index, start) in first.followingTokens.enumerated() {
                    let page = try await database.fetchZoneChanges(zone, since: start, limit: limit)
                    let same = chained[index + 2]
                    #expect(page.changed.map(\.id.name) == same.changed.map(\.id.name), "limit \(limit), start \(index)")
                    #expect(page.deleted == same.deleted)
                    #expect(page.token == same.token && page.moreComing == same.moreComing)
                }
            }
            // The last page plans nothing: nothing comes after it.
            let last = try await database.fetchArrivingZoneChanges(
                zone, since: chained.dropLast().last?.token, limit: limit, plannedPages: 4)
            #expect(!last.moreComing && last.followingTokens.isEmpty)
            // Nor does a page asked without planning.
            let plain = try await database.fetchZoneChanges(zone, since: nil, limit: limit)
            #expect(plain.followingTokens.isEmpty)
        }
    }

    /// Records saved again, deleted and added after the planning, in random shapes: the pages
    /// fetched from the planned starts, then the chain after the last of them, bring the zone
    /// to the state a fetch from scratch gives. No change falls between two pages.
    @Test(arguments: CloudKind.available, 0..<6)
    func noChangeFallsBetweenPlannedPages(_ kind: CloudKind, seed: UInt64) async throws {
        try await kind.run {
            var random = SeededGenerator(state: seed)
            let count = 40 + Int(random.next() % 40)
            let names = (0..<count).map { String(format: "r%03d", $0) }
            try await fill(names, deleteEvery: Int(random.next() % 4))
            let limit = [1, 3, 5, 8][Int(random.next() % 4)]
            let first = try await database.fetchArrivingZoneChanges(zone, since: nil, limit: limit, plannedPages: 4)
            let firstPage = try await first.changes()
            // Changes after the planning: whole stretches saved again (a page's worth and more,
            // the shape that empties the range between two starts), single records, deletes,
            // new records.
            let stretch = Int(random.next() % UInt64(count))
            let length = limit * (1 + Int(random.next() % 3))
            var again = Array(names[stretch..<min(count, stretch + length)])
            again += (0..<5).map { _ in names[Int(random.next() % UInt64(count))] }
            let alive = try await chain(since: nil, limit: 500).flatMap(\.changed)
            let tags = Dictionary(alive.map { ($0.id.name, $0.changeTag) }, uniquingKeysWith: { a, _ in a })
            var saving: [CloudRecord] = []
            for name in Set(again) where tags[name] != nil {
                var changed = record(name, Int(random.next() % 1000))
                changed.changeTag = tags[name] ?? nil
                saving.append(changed)
            }
            let deleting = (0..<3).map { _ in names[Int(random.next() % UInt64(count))] }.filter { name in
                tags[name] != nil && !saving.contains { $0.id.name == name }
            }
            saving += (0..<4).map { record("new\($0)") }
            _ = try await database.modifyRecords(
                saving: saving, deleting: Array(Set(deleting)).map { CloudRecordID(name: $0, zone: zone) })
            // The page after the first, from its token; the pages from the planned starts, in
            // order; then the chain from the last one's token.
            var pages = [firstPage]
            if first.moreComing { pages.append(try await database.fetchZoneChanges(zone, since: first.token, limit: limit)) }
            for start in first.followingTokens {
                pages.append(try await database.fetchZoneChanges(zone, since: start, limit: limit))
            }
            if let last = pages.last, last.moreComing {
                pages += try await chain(since: last.token, limit: limit)
            }
            let expected = Self.applied(try await chain(since: nil, limit: 500))
            let state = Self.applied(pages)
            let missing = expected.filter { name, tag in tag != nil && state[name] != .some(tag) }.map(\.key).sorted()
            #expect(missing.isEmpty, "limit \(limit), count \(count): missing or stale \(missing.prefix(8))")
        }
    }

    /// A zone read through the shared database plans nothing: what a participant sees of it
    /// changes with their access.
    @Test(arguments: CloudKind.available)
    func aSharedZonePlansNothing(_ kind: CloudKind) async throws {
        try await kind.run {
            try await fill((0..<6).map { "r\($0)" })
            let root = CloudRecord(id: CloudRecordID(name: "root", zone: zone), type: "games")
            _ = try await database.modifyRecords(saving: [root], deleting: [])
            let children = (0..<6).map {
                CloudRecord(id: CloudRecordID(name: "c\($0)", zone: zone), type: "players", parent: root.id)
            }
            _ = try await database.modifyRecords(saving: children, deleting: [])
            var share = CloudShare(rootRecordID: root.id, title: "root")
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly))
            share = try await database.saveShare(share)
            let bob = cloud.container(user: "bob")
            _ = try await bob.acceptShare(url: share.url(inviting: .readOnly) + "#k=1.x")
            let page = try await bob.sharedDatabase.fetchArrivingZoneChanges(zone, since: nil, limit: 1, plannedPages: 4)
            #expect(page.moreComing)
            #expect(page.followingTokens.isEmpty)
        }
    }
}
