import Foundation
import StrataCloudClient
import StrataCloudService
import StrataSyncTestSupport
import Testing

@testable import StrataSync

/// An outside tester's attacks on the service's page-limit contract (cloud-api.openapi.yaml,
/// `ZonePageRequest.limit`): a `limit` below 1 is 400 `invalidRequest` naming the field; a
/// limit larger than the service's `maximumFetchPageSize` gets a page of that size with
/// `moreComing`; walking the tokens returns every record once. Through HTTP only.
@Suite(.enabled(if: CloudKind.postgresURL != nil, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(3)))
struct OutsidePageLimitTests {
    static func zone(_ name: String) -> CloudZoneID { CloudZoneID(name: name, owner: "alice") }

    /// Saves `names` (in requests of at most 200) and deletes `deleted` after, through the
    /// store; returns the names left.
    @discardableResult
    static func fill(
        _ zone: CloudZoneID, names: [String], deleting deleted: [String] = [], through live: LiveService
    ) async throws
        -> Set<String>
    {
        let alice = live.store.privateDatabase(of: "alice")
        try await alice.saveZones([zone])
        var start = 0
        while start < names.count {
            let chunk = names[start..<min(start + 200, names.count)]
            let result = try await alice.modifyRecords(
                saving: chunk.map { CloudRecord(id: CloudRecordID(name: $0, zone: zone), type: "games", fields: ["title": .text($0)]) },
                deleting: [])
            #expect(result.saveResults.values.allSatisfy { (try? $0.get()) != nil })
            start += 200
        }
        if !deleted.isEmpty {
            _ = try await alice.modifyRecords(saving: [], deleting: deleted.map { CloudRecordID(name: $0, zone: zone) })
        }
        return Set(names).subtracting(deleted)
    }

    /// Every page from `token` on with `limit`, checking each page's bound.
    static func walk(
        _ zone: CloudZoneID, from token: CloudChangeToken? = nil, limit: Int, maximum: Int, in database: any CloudDatabase,
        _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (changed: [String], deleted: [String], pages: Int) {
        var token = token
        var changed: [String] = []
        var deleted: [String] = []
        var pages = 0
        let bound = min(limit, maximum)
        while true {
            let page = try await database.fetchZoneChanges(zone, since: token, limit: limit)
            pages += 1
            #expect(
                page.changed.count + page.deleted.count <= bound,
                "\(context): a page of \(page.changed.count) records and \(page.deleted.count) tombstones for a bound of \(bound)",
                sourceLocation: sourceLocation)
            if page.moreComing {
                #expect(
                    !page.changed.isEmpty || !page.deleted.isEmpty, "\(context): an empty page with moreComing",
                    sourceLocation: sourceLocation)
                // More waits: an estimate of none would say otherwise.
                #expect(page.remainingEstimate != 0, "\(context): moreComing with an estimate of 0", sourceLocation: sourceLocation)
            } else {
                #expect(
                    page.remainingEstimate == nil || page.remainingEstimate == 0,
                    "\(context): the last page estimates \(String(describing: page.remainingEstimate)) more", sourceLocation: sourceLocation
                )
            }
            changed += page.changed.map(\.id.name)
            deleted += page.deleted.map(\.id.name)
            token = page.token
            if !page.moreComing { break }
            try #require(pages < 5_000, "\(context): no end after \(pages) pages", sourceLocation: sourceLocation)
        }
        return (changed, deleted, pages)
    }

    /// Limits at the maximum − 1, the maximum, + 1, twice it and `Int.max`, with maximums of
    /// 1, 2 and 1,000 (the default): pages never larger than the smaller of the two, every
    /// record exactly once, and tombstones of records deleted in the middle never shown as
    /// records.
    @Test(arguments: [1, 2, 1_000])
    func limitsAroundTheMaximum(maximum: Int) async throws {
        try await LiveService.with(configure: { $0.maximumFetchPageSize = maximum }) { live in
            let z = Self.zone("around")
            let count = maximum == 1_000 ? 2_005 : 9
            let names = (0..<count).map { String(format: "r%05d", $0) }
            let deleted = stride(from: 1, to: count, by: maximum == 1_000 ? 97 : 3).map { names[$0] }
            let alive = try await Self.fill(z, names: names, deleting: deleted, through: live)
            let alice = live.container(user: "alice").privateDatabase
            var limits = [maximum, maximum + 1, maximum * 2, Int.max, Int.max - 1]
            if maximum > 1 { limits.append(maximum - 1) }
            for limit in limits {
                let context = "maximum \(maximum), limit \(limit)"
                let walked = try await Self.walk(z, limit: limit, maximum: maximum, in: alice, context)
                #expect(walked.changed.count == Set(walked.changed).count, "\(context): a record twice")
                #expect(Set(walked.changed) == alive, "\(context): missing \(alive.subtracting(walked.changed).sorted().prefix(5))")
                #expect(Set(walked.deleted).isSubset(of: Set(deleted)), "\(context): tombstones of live records")
                #expect(Set(walked.deleted).isDisjoint(with: walked.changed), "\(context): a record both live and deleted")
                let bound = min(limit, maximum)
                let least = (alive.count + bound - 1) / bound
                #expect(walked.pages >= least, "\(context): \(walked.pages) pages for \(alive.count) records")
            }
        }
    }

    /// A zone of saves, deletes and saves again, walked with a maximum of 2 from every page
    /// boundary: the rest of the feed from there is the same with any limit over the maximum
    /// as with the maximum itself.
    @Test func tombstonesAndRecordsAcrossPageBoundaries() async throws {
        try await LiveService.with(configure: { $0.maximumFetchPageSize = 2 }) { live in
            let z = Self.zone("mixed")
            let alice = live.container(user: "alice").privateDatabase
            try await Self.fill(z, names: ["a", "b", "c", "d", "e", "f", "g"], deleting: ["b", "d", "f"], through: live)
            try await Self.fill(z, names: ["h"], deleting: ["a"], through: live)
            // d saved again under its name, after its delete.
            let store = live.store.privateDatabase(of: "alice")
            _ = try await store.modifyRecords(saving: [CloudRecord(id: CloudRecordID(name: "d", zone: z), type: "games")], deleting: [])
            var tokens: [CloudChangeToken?] = [nil]
            var token: CloudChangeToken?
            while true {
                let page = try await alice.fetchZoneChanges(z, since: token, limit: 2)
                tokens.append(page.token)
                token = page.token
                if !page.moreComing { break }
                try #require(tokens.count < 50)
            }
            for (index, start) in tokens.enumerated() {
                let plain = try await Self.walk(z, from: start, limit: 2, maximum: 2, in: alice, "from boundary \(index), limit 2")
                for limit in [3, 1_000, Int.max] {
                    let context = "from boundary \(index), limit \(limit)"
                    let walked = try await Self.walk(z, from: start, limit: limit, maximum: 2, in: alice, context)
                    #expect(walked.changed == plain.changed, "\(context)")
                    #expect(walked.deleted == plain.deleted, "\(context)")
                }
            }
            let all = try await Self.walk(z, limit: Int.max, maximum: 2, in: alice, "whole")
            #expect(Set(all.changed) == ["c", "d", "e", "g", "h"])
            #expect(all.changed.count == 5)
        }
    }

    /// Limits below 1, alone and among valid first pages: refused naming the field, with any
    /// maximum, and the service answers the next request.
    @Test(arguments: [1, 2, 1_000])
    func limitsBelowOneAreRefusedNamingTheField(maximum: Int) async throws {
        try await LiveService.with(configure: { $0.maximumFetchPageSize = maximum }) { live in
            let z = Self.zone("refused")
            let other = Self.zone("other")
            try await Self.fill(z, names: ["a", "b", "c"], through: live)
            try await Self.fill(other, names: ["x"], through: live)
            let alice = live.container(user: "alice").privateDatabase
            for limit in [0, -1, -2, Int.min, Int.min + 1] {
                let field = await ServiceInputTests.refusedField { _ = try await alice.fetchZoneChanges(z, since: nil, limit: limit) }
                #expect(field == "limit", "maximum \(maximum), limit \(limit)")
                let mixed = await ServiceInputTests.refusedField {
                    _ = try await alice.fetchDatabaseChanges(
                        since: nil,
                        firstPages: [
                            CloudZonePageRequest(zone: z, since: nil, limit: Int.max),
                            CloudZonePageRequest(zone: other, since: nil, limit: limit),
                        ])
                }
                #expect(mixed == "firstPages[1].limit", "maximum \(maximum), limit \(limit)")
            }
            let page = try await alice.fetchZoneChanges(z, since: nil, limit: Int.max)
            #expect(page.changed.count == min(3, maximum))
        }
    }

    /// Several first pages in one request with mixed limits (1, the maximum, past it,
    /// `Int.max`; a zone listed twice is read from its first entry): each page is bounded by
    /// its own limit and the maximum, says `moreComing` when more wait, and following each
    /// page's token reaches the rest of its zone once.
    @Test(arguments: [2, 5])
    func firstPagesWithMixedLimits(maximum: Int) async throws {
        try await LiveService.with(configure: { $0.maximumFetchPageSize = maximum }) { live in
            let zones = (0..<5).map { Self.zone("z\($0)") }
            var alive: [CloudZoneID: Set<String>] = [:]
            for (index, zone) in zones.enumerated() {
                let names = (0..<(3 + index * 3)).map { "\(zone.name)-\($0)" }
                alive[zone] = try await Self.fill(zone, names: names, deleting: index == 3 ? [names[0], names[4]] : [], through: live)
            }
            let limits = [1, maximum, maximum + 1, Int.max, Int.max]
            let alice = live.container(user: "alice").privateDatabase
            var requests = zip(zones, limits).map { CloudZonePageRequest(zone: $0, since: nil, limit: $1) }
            // z4 listed again with a limit of 1 after its first entry of Int.max.
            requests.append(CloudZonePageRequest(zone: zones[4], since: nil, limit: 1))
            let changes = try await alice.fetchDatabaseChanges(since: nil, firstPages: requests)
            for (zone, limit) in zip(zones, limits) {
                let context = "maximum \(maximum), \(zone.name) limit \(limit)"
                let page = try #require(changes.firstPages[zone], "\(context): no first page")
                let bound = min(limit, maximum)
                let expected = try #require(alive[zone])
                #expect(page.changed.count + page.deleted.count <= bound, "\(context): \(page.changed.count) records")
                #expect(page.changed.count == min(bound, expected.count) || !page.deleted.isEmpty, "\(context): \(page.changed.count)")
                #expect(page.moreComing == (expected.count > bound) || !page.deleted.isEmpty, "\(context)")
                var names = page.changed.map(\.id.name)
                if page.moreComing {
                    names += try await Self.walk(zone, from: page.token, limit: limit, maximum: maximum, in: alice, context).changed
                }
                #expect(names.count == Set(names).count, "\(context): a record twice")
                #expect(Set(names) == expected, "\(context)")
            }
            // The same zone listed with 1 first: its page is of 1.
            let again = try await alice.fetchDatabaseChanges(
                since: nil,
                firstPages: [
                    CloudZonePageRequest(zone: zones[2], since: nil, limit: 1),
                    CloudZonePageRequest(zone: zones[2], since: nil, limit: Int.max),
                ])
            #expect(again.firstPages[zones[2]]?.changed.count == 1)
        }
    }

    /// Engines whose page size (the default 1,000, and 50,000) is larger than the service's
    /// maximum (2 and 7): a first sync of a few hundred rows arrives whole, and so do later
    /// deletes, re-inserts and moves fetched incrementally.
    @Test(arguments: [(2, 1_000), (7, 50_000)])
    func anEngineAskingForMoreThanTheMaximumSyncs(maximum: Int, fetchPageSize: Int) async throws {
        try await LiveService.with(configure: { $0.maximumFetchPageSize = maximum }) { live in
            let container = live.container(user: "alice")
            let phone = try await SyncTestDevice("phone", container: container, fetchPageSize: fetchPageSize)
            let laptop = try await SyncTestDevice("laptop", container: container, fetchPageSize: fetchPageSize)
            var sql = ""
            for game in 0..<60 {
                sql += "INSERT INTO games (id, title, score) VALUES ('g\(game)', 'Game \(game)', \(game));"
                for player in 0..<4 { sql += "INSERT INTO players (id, gameID, name) VALUES ('p\(game)-\(player)', 'g\(game)', 'P');" }
            }
            try await phone.execute(sql)
            try await phone.engine.sendChanges()
            try await laptop.engine.fetchChanges()
            #expect(try await laptop.rows().count == 300)
            #expect(try await laptop.rows() == phone.rows())
            // Deletes (cascading to players), re-inserts with the same keys and moves: the next
            // fetch's feed holds tombstones and records across many pages.
            try await phone.execute(
                "DELETE FROM games WHERE CAST(substr(id, 2) AS INTEGER) % 3 = 0;"
                    + "INSERT INTO games (id, title) VALUES ('g0', 'Again'), ('g30', 'Again');"
                    + "UPDATE players SET gameID = 'g1' WHERE gameID = 'g2';")
            try await phone.engine.sendChanges()
            try await laptop.engine.fetchChanges()
            #expect(try await laptop.rows() == phone.rows())
            let fresh = try await SyncTestDevice("fresh", container: container, fetchPageSize: fetchPageSize)
            try await fresh.engine.fetchChanges()
            #expect(try await fresh.rows() == phone.rows())
            #expect(try await phone.pending() == 0)
        }
    }
}
