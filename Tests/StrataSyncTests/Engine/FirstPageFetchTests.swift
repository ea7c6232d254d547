import Foundation
import StrataCloud
import StrataSQLite
import StrataSyncTestSupport
import Testing

@testable import StrataSync

/// The engine's zone comes with its database's changes (issue #27, the push path): a small
/// change is fetched in the one request that lists it, a large one goes on with the zone's own
/// feed from the first page's token, and a page the cloud cannot give (an expired token) is
/// fetched as before. Plain and end-to-end encrypted, as the page is opened on the way.
@Suite(.timeLimit(.minutes(2)))
struct FirstPageFetchTests {
    static let encryptions: [SyncEncryption] = [.disabled, .endToEnd]

    @Test(arguments: encryptions) func aSmallChangeComesInTheRequestThatListsIt(_ encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, encryption: encryption)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, encryption: encryption)
        try await phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await phone.engine.sendChanges()
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == ["game g1 'Poker' NULL"])

        for round in 0..<3 {
            try await phone.execute(
                "UPDATE games SET title = 'Poker \(round)' WHERE id = 'g1'; INSERT INTO players (id, gameID) VALUES ('p\(round)', 'g1')")
            try await phone.engine.sendChanges()
            let (lists, pages) = (cloud.requestCount(.fetchDatabaseChanges), cloud.requestCount(.fetchZoneChanges))
            try await laptop.engine.fetchChanges()
            #expect(try await laptop.rows() == (try await phone.rows()), "round \(round)")
            #expect(cloud.requestCount(.fetchDatabaseChanges) == lists + 2, "the private and the shared database's lists")
            #expect(cloud.requestCount(.fetchZoneChanges) == pages, "round \(round): the zone's page came with its list")
        }
        // Nothing new: no page either.
        let pages = cloud.requestCount(.fetchZoneChanges)
        try await laptop.engine.fetchChanges()
        #expect(cloud.requestCount(.fetchZoneChanges) == pages)
        #expect(try await laptop.pending() == 0)
    }

    /// Pages of 3 over 10 games and 20 players: the first page comes with the list and says
    /// more come; the rest come from the zone's feed, from its token, with nothing twice or
    /// missing.
    @Test(arguments: encryptions) func aLargeChangeGoesOnWithTheZonesFeed(_ encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, encryption: encryption)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, fetchPageSize: 3, encryption: encryption)
        var sql = ""
        for game in 0..<10 {
            sql += "INSERT INTO games (id, title) VALUES ('g\(game)', 'Game \(game)');"
            for player in 0..<2 { sql += "INSERT INTO players (id, gameID, name) VALUES ('g\(game)p\(player)', 'g\(game)', 'P');" }
        }
        try await phone.execute(sql)
        try await phone.engine.sendChanges()
        let pages = cloud.requestCount(.fetchZoneChanges)
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == (try await phone.rows()))
        #expect(try await laptop.rows().count == 30)
        // 30 records in pages of 3: the first with the list, nine from the feed (the
        // encrypted engine's key zone adds its own).
        #expect(cloud.requestCount(.fetchZoneChanges) - pages >= 9)
        #expect(try await laptop.pending() == 0)
    }

    /// The laptop's zone token expires (tombstones purged after it fetched): the list still
    /// names the zone, the cloud gives no page, and the zone is fetched from scratch as before;
    /// a row deleted meanwhile goes from the laptop too.
    @Test(arguments: encryptions) func anExpiredZoneTokenIsFetchedAsBefore(_ encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, encryption: encryption)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, encryption: encryption)
        try await phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker'), ('g2', 'Chess')")
        try await phone.engine.sendChanges()
        try await laptop.engine.fetchChanges()
        try await phone.execute("DELETE FROM games WHERE id = 'g1'; INSERT INTO games (id, title) VALUES ('g3', 'Go')")
        try await phone.engine.sendChanges()
        cloud.purgeTombstones(in: CloudZoneID(name: "strata.default", owner: "alice"))
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == ["game g2 'Chess' NULL", "game g3 'Go' NULL"])
        #expect(try await laptop.rows() == (try await phone.rows()))
    }
}
