import Foundation
import StrataSync
import Testing

/// A database's changes with the first pages of the zones a device follows
/// (`fetchDatabaseChanges(since:firstPages:)`, issue #27's push path): each page is the page
/// `fetchZoneChanges` gives from the same token, only zones that changed get one, a page the
/// cloud cannot give is left out while the others come, and the request is bounded.
@Suite(.timeLimit(.minutes(5))) struct CloudFirstPageTests {
    var cloud: TestCloud { TestCloud.current }
    let first = CloudZoneID(name: "first", owner: "alice")
    let second = CloudZoneID(name: "second", owner: "alice")
    var database: any CloudDatabase { cloud.container(user: "alice").privateDatabase }

    func put(_ names: [String], in zone: CloudZoneID) async throws {
        let records = names.map { CloudRecord(id: CloudRecordID(name: $0, zone: zone), type: "games", fields: ["title": .text($0)]) }
        let result = try await database.modifyRecords(saving: records, deleting: [])
        #expect(result.saveResults.values.allSatisfy { (try? $0.get()) != nil })
    }

    func names(_ page: CloudZoneChanges?) -> [String] { page?.changed.map(\.id.name) ?? [] }

    @Test(arguments: CloudKind.available) func onlyZonesThatChangedGetAPageEqualToTheZonesOwn(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([first, second])
            try await put(["a", "b"], in: first)
            try await put(["x"], in: second)
            let missing = CloudZoneID(name: "missing", owner: "alice")
            let all = try await database.fetchDatabaseChanges(
                since: nil,
                firstPages: [
                    CloudZonePageRequest(zone: first, since: nil, limit: 10), CloudZonePageRequest(zone: missing, since: nil, limit: 10),
                ])
            #expect(Set(all.changedZones) == [first, second])
            #expect(Set(all.firstPages.keys) == [first], "only the zones asked for, and only if they changed")
            let own = try await database.fetchZoneChanges(first, since: nil, limit: 10)
            #expect(names(all.firstPages[first]) == names(own))
            #expect(all.firstPages[first]?.token == own.token)
            #expect(all.firstPages[first]?.moreComing == false)
            #expect(all.token == (try await database.fetchDatabaseChanges(since: nil)).token)

            // Only `second` changes: `first`, asked from its page's token, gets no page.
            try await put(["y"], in: second)
            let later = try await database.fetchDatabaseChanges(
                since: all.token,
                firstPages: [
                    CloudZonePageRequest(zone: first, since: own.token, limit: 10),
                    CloudZonePageRequest(zone: second, since: nil, limit: 10),
                ])
            #expect(later.changedZones == [second])
            #expect(Set(later.firstPages.keys) == [second])
            #expect(Set(names(later.firstPages[second])) == ["x", "y"])
            // A deletion comes as the zone's own page has it.
            _ = try await database.modifyRecords(saving: [], deleting: [CloudRecordID(name: "a", zone: first)])
            let deletion = try await database.fetchDatabaseChanges(
                since: later.token, firstPages: [CloudZonePageRequest(zone: first, since: own.token, limit: 10)])
            #expect(deletion.firstPages[first]?.deleted == [CloudTombstone(id: CloudRecordID(name: "a", zone: first), type: "games")])
            #expect(deletion.firstPages[first]?.changed.isEmpty == true)
        }
    }

    /// A page of one change out of three says more come, and the zone's feed goes on from its
    /// token with exactly the rest.
    @Test(arguments: CloudKind.available) func aFirstPageIsAPageTheFeedGoesOnFrom(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([first])
            try await put(["a", "b", "c"], in: first)
            let changes = try await database.fetchDatabaseChanges(
                since: nil, firstPages: [CloudZonePageRequest(zone: first, since: nil, limit: 1)])
            let page = try #require(changes.firstPages[first])
            #expect(names(page) == ["a"])
            #expect(page.moreComing)
            #expect(page.remainingEstimate == 2)
            let rest = try await database.fetchZoneChanges(first, since: page.token, limit: 10)
            #expect(names(rest) == ["b", "c"])
            #expect(!rest.moreComing)
        }
    }

    /// A zone whose token expired gets no page, and the call still answers, with the other
    /// zone's page; fetching the zone itself meets the error.
    @Test(arguments: CloudKind.available) func aPageTheCloudCannotGiveIsLeftOutAndTheOthersCome(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([first, second])
            try await put(["a"], in: first)
            let old = try await database.fetchZoneChanges(first, since: nil, limit: 10).token
            let before = try await database.fetchDatabaseChanges(since: nil).token
            try await put(["b"], in: first)
            try await cloud.purgeTombstones(in: first)
            try await put(["x"], in: second)
            let changes = try await database.fetchDatabaseChanges(
                since: before,
                firstPages: [
                    CloudZonePageRequest(zone: first, since: old, limit: 10), CloudZonePageRequest(zone: second, since: nil, limit: 10),
                ])
            #expect(Set(changes.changedZones) == [first, second])
            #expect(changes.firstPages[first] == nil)
            #expect(names(changes.firstPages[second]) == ["x"])
            await #expect(throws: CloudError.changeTokenExpired) {
                _ = try await database.fetchZoneChanges(first, since: old, limit: 10)
            }
            // A token no cloud issued is as good as expired: no page, no failure.
            let foreign = try await database.fetchDatabaseChanges(
                since: before, firstPages: [CloudZonePageRequest(zone: second, since: CloudChangeToken("not a token"), limit: 10)])
            #expect(foreign.firstPages.isEmpty)
        }
    }

    /// At most `maximumPerRequest` pages (one more is `limitExceeded`, before anything is
    /// read); a zone asked for twice is read from its first request.
    @Test(arguments: CloudKind.available) func firstPagesAreBounded(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([first])
            try await put(["a", "b"], in: first)
            let maximum = CloudZonePageRequest.maximumPerRequest
            let zones = (0...maximum).map { CloudZonePageRequest(zone: CloudZoneID(name: "z\($0)", owner: "alice"), since: nil, limit: 10) }
            await #expect(throws: CloudError.limitExceeded) {
                _ = try await database.fetchDatabaseChanges(since: nil, firstPages: zones)
            }
            let atTheLimit = try await database.fetchDatabaseChanges(since: nil, firstPages: Array(zones.prefix(maximum)))
            #expect(atTheLimit.firstPages.isEmpty)
            let twice = try await database.fetchDatabaseChanges(
                since: nil,
                firstPages: [
                    CloudZonePageRequest(zone: first, since: nil, limit: 1), CloudZonePageRequest(zone: first, since: nil, limit: 10),
                ])
            #expect(names(twice.firstPages[first]) == ["a"])
        }
    }

    /// Through the shared database, a participant's first page is what row-level security
    /// lets them see: the shared record, not its unshared neighbour.
    @Test(arguments: CloudKind.available) func aParticipantsFirstPageHoldsWhatTheyMaySee(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([first])
            let game = CloudRecordID(name: "g1:games", zone: first)
            try await put(["g1:games", "g2:games"], in: first)
            var share = CloudShare(rootRecordID: game, title: "Poker night")
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly))
            share = try await database.saveShare(share)
            _ = try await cloud.container(user: "bob").acceptShare(url: share.url)
            let bob = cloud.container(user: "bob").sharedDatabase
            let changes = try await bob.fetchDatabaseChanges(
                since: nil, firstPages: [CloudZonePageRequest(zone: first, since: nil, limit: 10)])
            #expect(changes.changedZones == [first])
            #expect(names(changes.firstPages[first]) == ["g1:games"])
            #expect(changes.firstPages[first]?.token == (try await bob.fetchZoneChanges(first, since: nil, limit: 10)).token)
        }
    }
}
