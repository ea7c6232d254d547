import Foundation
import StrataCloudClient
import StrataCloudService
import StrataSyncTestSupport
import Testing

@testable import StrataSync

/// A page `limit` above the service's `maximumFetchPageSize` gets a page of that size, with
/// `moreComing`, as the store bounds its own pages: the engine's page size is its own setting,
/// and a service configured with smaller pages must still serve it. Before, such a limit was a
/// permanent `invalidRequest`, and an engine asking for more than an operator allowed could
/// never fetch again.
@Suite(.enabled(if: CloudKind.postgresURL != nil, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct ServicePageSizeTests {
    let zone = CloudZoneID(name: "games", owner: "alice")

    func saveGames(_ count: Int, through live: LiveService) async throws {
        let alice = live.store.privateDatabase(of: "alice")
        try await alice.saveZones([zone])
        let records = (0..<count).map { CloudRecord(id: CloudRecordID(name: "g\($0)", zone: zone), type: "games") }
        _ = try await alice.modifyRecords(saving: records, deleting: [])
    }

    /// Limits at the maximum, one past it, far past it, and `Int.max`; each page holds at most
    /// the maximum, and following the tokens reaches every record once.
    @Test(arguments: [3, 4, 1_000, Int.max])
    func aLimitOverTheMaximumGetsPagesOfTheMaximum(limit: Int) async throws {
        try await LiveService.with(configure: { $0.maximumFetchPageSize = 3 }) { live in
            try await saveGames(10, through: live)
            let alice = live.container(user: "alice").privateDatabase
            var token: CloudChangeToken?
            var names: [String] = []
            var pages = 0
            while true {
                let page = try await alice.fetchZoneChanges(zone, since: token, limit: limit)
                #expect(page.changed.count <= 3, "limit \(limit): a page of \(page.changed.count)")
                names += page.changed.map(\.id.name)
                token = page.token
                pages += 1
                if !page.moreComing { break }
                try #require(pages < 20, "limit \(limit): no end after \(pages) pages")
            }
            #expect(names.sorted() == (0..<10).map { "g\($0)" }.sorted(), "limit \(limit)")
            #expect(pages == 4, "limit \(limit)")
        }
    }

    /// The same bound for a first page that comes with the database's changes.
    @Test(arguments: [4, Int.max])
    func aFirstPageOverTheMaximumIsBoundedToo(limit: Int) async throws {
        try await LiveService.with(configure: { $0.maximumFetchPageSize = 3 }) { live in
            try await saveGames(10, through: live)
            let alice = live.container(user: "alice").privateDatabase
            let changes = try await alice.fetchDatabaseChanges(
                since: nil, firstPages: [CloudZonePageRequest(zone: zone, since: nil, limit: limit)])
            let page = try #require(changes.firstPages[zone])
            #expect(page.changed.count == 3)
            #expect(page.moreComing)
        }
    }

    /// Limits below 1 are still refused, naming the field.
    @Test func aLimitBelowOneIsStillRefused() async throws {
        try await LiveService.with(configure: { $0.maximumFetchPageSize = 3 }) { live in
            try await saveGames(1, through: live)
            let alice = live.container(user: "alice").privateDatabase
            for limit in [0, -1, Int.min] {
                #expect(
                    await ServiceInputTests.refusedField { _ = try await alice.fetchZoneChanges(zone, since: nil, limit: limit) } == "limit"
                )
                #expect(
                    await ServiceInputTests.refusedField {
                        _ = try await alice.fetchDatabaseChanges(
                            since: nil, firstPages: [CloudZonePageRequest(zone: zone, since: nil, limit: limit)])
                    } == "firstPages[0].limit")
            }
        }
    }

    /// An engine with the default page size against a service allowing pages of 7: a first
    /// sync of 40 games and 120 players arrives whole.
    @Test func anEngineWithTheDefaultPageSizeSyncsThroughAServiceWithSmallerPages() async throws {
        try await LiveService.with(configure: { $0.maximumFetchPageSize = 7 }) { live in
            let container = live.container(user: "alice")
            let phone = try await SyncTestDevice("phone", container: container, fetchPageSize: SyncEngineConfiguration().fetchPageSize)
            let laptop = try await SyncTestDevice("laptop", container: container, fetchPageSize: SyncEngineConfiguration().fetchPageSize)
            var sql = ""
            for game in 0..<40 {
                sql += "INSERT INTO games (id, title, score) VALUES ('g\(game)', 'Game \(game)', \(game));"
                for player in 0..<3 { sql += "INSERT INTO players (id, gameID, name) VALUES ('p\(game)-\(player)', 'g\(game)', 'P');" }
            }
            try await phone.execute(sql)
            try await phone.engine.sendChanges()
            try await laptop.engine.fetchChanges()
            #expect(try await laptop.rows() == phone.rows())
            #expect(try await laptop.rows().count == 160)
        }
    }
}
