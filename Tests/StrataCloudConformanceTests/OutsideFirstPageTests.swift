import Foundation
import StrataSync
import Synchronization
import Testing

/// An outside tester's attack on `fetchDatabaseChanges(since:firstPages:)`, from its documented
/// contract only: every page it gives is exactly the page `fetchZoneChanges` gives from the
/// same token, for every zone named that changed and whose page the cloud can give, and no
/// other; on every cloud.
@Suite(.timeLimit(.minutes(5))) struct OutsideFirstPageTests {
    var cloud: TestCloud { TestCloud.current }
    var alice: any CloudDatabase { cloud.container(user: "alice").privateDatabase }
    func zone(_ name: String, owner: String = "alice") -> CloudZoneID { CloudZoneID(name: name, owner: owner) }

    func put(_ names: [String], in zone: CloudZoneID, title: String = "t", as database: (any CloudDatabase)? = nil) async throws {
        let database = database ?? alice
        let ids = names.map { CloudRecordID(name: $0, zone: zone) }
        // Fetch current tags so a re-save of an existing record is accepted.
        let held = try await database.fetchRecords(ids)
        let records = ids.map { id in
            CloudRecord(
                id: id, type: "games", fields: ["title": .text("\(title) \(id.name)")],
                changeTag: (try? held[id]?.get())?.changeTag)
        }
        let result = try await database.modifyRecords(saving: records, deleting: [])
        for id in ids {
            #expect((try? result.saveResults[id]?.get()) != nil, "save \(id.name): \(String(describing: result.saveResults[id]))")
        }
    }

    func delete(_ names: [String], in zone: CloudZoneID, as database: (any CloudDatabase)? = nil) async throws {
        let database = database ?? alice
        let result = try await database.modifyRecords(saving: [], deleting: names.map { CloudRecordID(name: $0, zone: zone) })
        for (id, outcome) in result.deleteResults { #expect((try? outcome.get()) != nil, "delete \(id.name)") }
    }

    /// A page, as comparable parts.
    struct Page: Equatable, CustomStringConvertible {
        var changed: [CloudRecord]
        var deleted: [CloudTombstone]
        var token: CloudChangeToken
        var moreComing: Bool
        var remainingEstimate: Int?
        init(_ page: CloudZoneChanges) {
            changed = page.changed
            deleted = page.deleted
            token = page.token
            moreComing = page.moreComing
            remainingEstimate = page.remainingEstimate
        }
        var description: String {
            "changed \(changed.map(\.id.name)) deleted \(deleted.map(\.id.name)) more \(moreComing) est \(String(describing: remainingEstimate))"
        }
    }

    /// Checks the documented contract of one answer against the zone's own feed, read right
    /// after (nothing changes in between): the list is the plain list; each zone asked for that
    /// is listed as changed gets a page iff `fetchZoneChanges` from its first request's token
    /// answers, and that page is the one `fetchZoneChanges` gives; nothing else gets a page.
    func checkAgrees(
        _ changes: CloudDatabaseChanges, since token: CloudChangeToken?, requests: [CloudZonePageRequest],
        in database: any CloudDatabase, _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let plain = try await database.fetchDatabaseChanges(since: token)
        #expect(Set(changes.changedZones) == Set(plain.changedZones), "\(context): changed zones", sourceLocation: sourceLocation)
        #expect(Set(changes.deletedZones) == Set(plain.deletedZones), "\(context): deleted zones", sourceLocation: sourceLocation)
        var firstRequests: [CloudZoneID: CloudZonePageRequest] = [:]
        for request in requests where firstRequests[request.zone] == nil { firstRequests[request.zone] = request }
        for key in changes.firstPages.keys {
            #expect(firstRequests[key] != nil, "\(context): a page for \(key), never asked for", sourceLocation: sourceLocation)
            #expect(
                changes.changedZones.contains(key), "\(context): a page for \(key), not listed as changed", sourceLocation: sourceLocation)
        }
        for (zone, request) in firstRequests {
            let listed = changes.changedZones.contains(zone)
            let own: Result<CloudZoneChanges, any Error>
            do { own = .success(try await database.fetchZoneChanges(zone, since: request.since, limit: request.limit)) } catch {
                own = .failure(error)
            }
            switch (listed, own, changes.firstPages[zone]) {
            case (false, _, nil): break
            case (false, _, .some(let page)):
                Issue.record("\(context): \(zone) did not change but got \(Page(page))", sourceLocation: sourceLocation)
            case (true, .failure, nil): break
            case (true, .failure(let error), .some(let page)):
                Issue.record("\(context): \(zone) got \(Page(page)) but its own fetch fails: \(error)", sourceLocation: sourceLocation)
            case (true, .success(let expected), nil):
                Issue.record(
                    "\(context): \(zone) changed, its own fetch answers \(Page(expected)), but no page came", sourceLocation: sourceLocation
                )
            case (true, .success(let expected), .some(let page)):
                #expect(Page(page) == Page(expected), "\(context): \(zone)", sourceLocation: sourceLocation)
            }
        }
    }

    /// Every page, by limit, following the zone's own feed from `since`.
    func ownPages(_ zone: CloudZoneID, since: CloudChangeToken?, limit: Int, in database: any CloudDatabase) async throws -> [Page] {
        var pages: [Page] = []
        var token = since
        for _ in 0..<100 {
            let page = try await database.fetchZoneChanges(zone, since: token, limit: limit)
            pages.append(Page(page))
            token = page.token
            if !page.moreComing { break }
        }
        return pages
    }

    /// A zone of saves, deletes and re-saves interleaved: for every limit from 1 to past the
    /// whole, and from every page boundary of the zone's own feed (nil, each page's token, the
    /// latest), the first page is the zone's own page.
    @Test(arguments: CloudKind.available) func everyLimitFromEveryBoundaryIsTheZonesOwnPage(_ kind: CloudKind) async throws {
        try await kind.run {
            let z = zone("mixed")
            try await alice.saveZones([z])
            try await put(["a", "b", "c"], in: z)
            try await delete(["b"], in: z)
            try await put(["d"], in: z)
            try await put(["b"], in: z, title: "again")  // deleted, then saved again under its name
            try await delete(["a"], in: z)
            try await put(["c"], in: z, title: "second")
            try await put(["e", "f"], in: z)
            try await delete(["f"], in: z)

            for limit in 1...8 {
                var boundaries: [CloudChangeToken?] = [nil]
                boundaries += try await ownPages(z, since: nil, limit: limit, in: alice).map(\.token)
                for (index, since) in boundaries.enumerated() {
                    let requests = [CloudZonePageRequest(zone: z, since: since, limit: limit)]
                    let changes = try await alice.fetchDatabaseChanges(since: nil, firstPages: requests)
                    try await checkAgrees(changes, since: nil, requests: requests, in: alice, "limit \(limit), boundary \(index)")
                    #expect(changes.firstPages[z] != nil, "limit \(limit), boundary \(index): the zone is listed, its page can be given")
                }
            }
        }
    }

    /// From the first page (with more coming), going on with `fetchZoneChanges` gives exactly
    /// the pages that paging with `fetchZoneChanges` alone gives after its first: nothing twice,
    /// nothing missing, the same tokens.
    @Test(arguments: CloudKind.available) func aFirstPageContinuedIsTheZonesOwnPaging(_ kind: CloudKind) async throws {
        try await kind.run {
            let z = zone("long")
            try await alice.saveZones([z])
            try await put((0..<7).map { "r\($0)" }, in: z)
            try await delete(["r2", "r5"], in: z)
            try await put(["r2", "r0"], in: z, title: "back")
            let start = try await alice.fetchDatabaseChanges(since: nil)
            let middle = try await ownPages(z, since: nil, limit: 3, in: alice)[0].token
            try await put(["r7", "r8"], in: z)
            try await delete(["r1"], in: z)

            for since in [nil, middle] as [CloudChangeToken?] {
                for limit in [1, 2, 3, 4, 5, 9, 10, 11] {
                    let changes = try await alice.fetchDatabaseChanges(
                        since: start.token, firstPages: [CloudZonePageRequest(zone: z, since: since, limit: limit)])
                    let first = try #require(changes.firstPages[z], "limit \(limit)")
                    var combined = [Page(first)]
                    if first.moreComing { combined += try await ownPages(z, since: first.token, limit: limit, in: alice) }
                    let own = try await ownPages(z, since: since, limit: limit, in: alice)
                    #expect(combined == own, "limit \(limit) since \(since == nil ? "nil" : "middle")")
                    let names = combined.flatMap { $0.changed.map(\.id.name) + $0.deleted.map { "-" + $0.id.name } }
                    #expect(Set(names).count == names.count, "limit \(limit): a change twice: \(names)")
                }
            }
        }
    }

    /// The zone token of the latest page with nothing new since the database token: not
    /// listed, no page. One change later, from a token one page behind, the page holds what
    /// that page held and the change.
    @Test(arguments: CloudKind.available) func latestTokenAndOnePageBehind(_ kind: CloudKind) async throws {
        try await kind.run {
            let z = zone("z")
            try await alice.saveZones([z])
            try await put(["a", "b", "c", "d"], in: z)
            let pages = try await ownPages(z, since: nil, limit: 2, in: alice)
            #expect(pages.count == 2)
            let behind = pages[0].token
            let latest = pages[1].token
            let list = try await alice.fetchDatabaseChanges(since: nil).token

            let quiet = [
                CloudZonePageRequest(zone: z, since: latest, limit: 2), CloudZonePageRequest(zone: zone("other"), since: nil, limit: 2),
            ]
            let nothing = try await alice.fetchDatabaseChanges(since: list, firstPages: quiet)
            #expect(nothing.changedZones.isEmpty)
            #expect(nothing.firstPages.isEmpty)
            try await checkAgrees(nothing, since: list, requests: quiet, in: alice, "quiet")

            // Listed from the start (nil list token) with the latest zone token: the page is the
            // zone's own, an empty one.
            let fromStart = try await alice.fetchDatabaseChanges(since: nil, firstPages: quiet)
            try await checkAgrees(fromStart, since: nil, requests: quiet, in: alice, "from start, latest")
            if let page = fromStart.firstPages[z] {
                #expect(page.changed.isEmpty && page.deleted.isEmpty && !page.moreComing)
            }

            try await put(["e"], in: z)
            let requests = [CloudZonePageRequest(zone: z, since: behind, limit: 5)]
            let later = try await alice.fetchDatabaseChanges(since: list, firstPages: requests)
            #expect(later.changedZones == [z])
            #expect(later.firstPages[z]?.changed.map(\.id.name) == ["c", "d", "e"])
            try await checkAgrees(later, since: list, requests: requests, in: alice, "behind")
            let latestRequests = [CloudZonePageRequest(zone: z, since: latest, limit: 5)]
            let fromLatest = try await alice.fetchDatabaseChanges(since: list, firstPages: latestRequests)
            #expect(fromLatest.firstPages[z]?.changed.map(\.id.name) == ["e"])
            try await checkAgrees(fromLatest, since: list, requests: latestRequests, in: alice, "latest")
        }
    }

    /// Eight requests at once: changed zones from nil and from a token, a zone that did not
    /// change, one that never existed, one whose token expired, one deleted since the list
    /// token, one asked for twice (the first a limit of 1), and another user's zone of the same
    /// name as one of alice's.
    @Test(arguments: CloudKind.available) func eightRequestsOfEveryKind(_ kind: CloudKind) async throws {
        try await kind.run {
            let (fresh, stepped, still, expired, doomed) = (zone("fresh"), zone("stepped"), zone("still"), zone("expired"), zone("doomed"))
            try await alice.saveZones([fresh, stepped, still, expired, doomed])
            for z in [stepped, still, expired, doomed] { try await put(["x", "y"], in: z) }
            let steppedToken = try await alice.fetchZoneChanges(stepped, since: nil, limit: 10).token
            let expiredToken = try await alice.fetchZoneChanges(expired, since: nil, limit: 10).token
            let list = try await alice.fetchDatabaseChanges(since: nil).token

            try await put(["a", "b", "c"], in: fresh)
            try await put(["z"], in: stepped)
            try await delete(["x"], in: expired)
            try await cloud.purgeTombstones(in: expired)
            try await put(["w"], in: expired)
            try await alice.deleteZones([doomed])
            let bobs = zone("fresh", owner: "bob")
            let bob = cloud.container(user: "bob").privateDatabase
            try await bob.saveZones([bobs])
            try await put(["secret"], in: bobs, as: bob)

            let requests = [
                CloudZonePageRequest(zone: fresh, since: nil, limit: 1),
                CloudZonePageRequest(zone: stepped, since: steppedToken, limit: 10),
                CloudZonePageRequest(zone: still, since: nil, limit: 10),
                CloudZonePageRequest(zone: zone("never"), since: nil, limit: 10),
                CloudZonePageRequest(zone: expired, since: expiredToken, limit: 10),
                CloudZonePageRequest(zone: doomed, since: nil, limit: 10),
                CloudZonePageRequest(zone: fresh, since: nil, limit: 10),
                CloudZonePageRequest(zone: bobs, since: nil, limit: 10),
            ]
            #expect(requests.count == CloudZonePageRequest.maximumPerRequest)
            let changes = try await alice.fetchDatabaseChanges(since: list, firstPages: requests)
            #expect(Set(changes.changedZones) == [fresh, stepped, expired])
            #expect(changes.deletedZones.contains(doomed))
            #expect(Set(changes.firstPages.keys) == [fresh, stepped])
            #expect(changes.firstPages[fresh]?.changed.map(\.id.name) == ["a"], "read from its first request (limit 1)")
            #expect(changes.firstPages[fresh]?.moreComing == true)
            #expect(changes.firstPages[stepped]?.changed.map(\.id.name) == ["z"])
            #expect(changes.firstPages[bobs] == nil, "bob's zone through alice's database")
            #expect(!changes.firstPages.values.flatMap(\.changed).contains { $0.id.name == "secret" })
            try await checkAgrees(changes, since: list, requests: requests, in: alice, "eight")
        }
    }

    /// More than eight requests is `limitExceeded` even when they all name one zone; a zone
    /// asked for twice is read from its first request even when that one is a token the cloud
    /// cannot serve and the second could.
    @Test(arguments: CloudKind.available) func duplicatesCountAndTheFirstWins(_ kind: CloudKind) async throws {
        try await kind.run {
            let z = zone("dup")
            try await alice.saveZones([z])
            try await put(["a"], in: z)
            let old = try await alice.fetchZoneChanges(z, since: nil, limit: 10).token
            try await delete(["a"], in: z)
            try await put(["b", "c"], in: z)
            try await cloud.purgeTombstones(in: z)
            let nine = Array(
                repeating: CloudZonePageRequest(zone: z, since: nil, limit: 1), count: CloudZonePageRequest.maximumPerRequest + 1)
            await #expect(throws: CloudError.limitExceeded) { _ = try await alice.fetchDatabaseChanges(since: nil, firstPages: nine) }
            let eight = Array(nine.dropFirst())
            let answered = try await alice.fetchDatabaseChanges(since: nil, firstPages: eight)
            #expect(answered.firstPages[z]?.changed.map(\.id.name) == ["b"])

            let expiredFirst = [CloudZonePageRequest(zone: z, since: old, limit: 10), CloudZonePageRequest(zone: z, since: nil, limit: 10)]
            let changes = try await alice.fetchDatabaseChanges(since: nil, firstPages: expiredFirst)
            #expect(changes.firstPages[z] == nil, "the first request's token expired; the second is not read")
            try await checkAgrees(changes, since: nil, requests: expiredFirst, in: alice, "expired first")

            let validFirst = Array(expiredFirst.reversed())
            let other = try await alice.fetchDatabaseChanges(since: nil, firstPages: validFirst)
            #expect(other.firstPages[z]?.changed.map(\.id.name) == ["b", "c"])
            try await checkAgrees(other, since: nil, requests: validFirst, in: alice, "valid first")
        }
    }

    /// Zones whose names Swift calls equal but whose bytes differ are two zones: each gets its
    /// own page, with its own records.
    @Test(arguments: CloudKind.available) func canonicallyEquivalentZoneNamesGetTheirOwnPages(_ kind: CloudKind) async throws {
        try await kind.run {
            let composed = zone("caf\u{E9}")
            let decomposed = zone("cafe\u{301}")
            #expect(composed.name == decomposed.name, "Swift calls the names equal: the premise")
            #expect(composed != decomposed)
            try await alice.saveZones([composed, decomposed])
            try await put(["only-composed"], in: composed)
            try await put(["only-decomposed-1", "only-decomposed-2"], in: decomposed)
            for order in [[composed, decomposed], [decomposed, composed]] {
                let requests = order.map { CloudZonePageRequest(zone: $0, since: nil, limit: 10) }
                let changes = try await alice.fetchDatabaseChanges(since: nil, firstPages: requests)
                #expect(changes.changedZones.count == 2)
                #expect(changes.firstPages.count == 2, "two zones, two pages")
                #expect(changes.firstPages[composed]?.changed.map(\.id.name) == ["only-composed"])
                #expect(changes.firstPages[decomposed]?.changed.map(\.id.name) == ["only-decomposed-1", "only-decomposed-2"])
                try await checkAgrees(changes, since: nil, requests: requests, in: alice, "order \(order.map(\.name.unicodeScalars.count))")
            }
            // Only one asked for: the other gets no page although Swift calls it equal.
            let one = [CloudZonePageRequest(zone: decomposed, since: nil, limit: 10)]
            let changes = try await alice.fetchDatabaseChanges(since: nil, firstPages: one)
            #expect(changes.firstPages.count == 1)
            #expect(changes.firstPages[composed] == nil)
            #expect(changes.firstPages[decomposed]?.changed.count == 2)
        }
    }

    /// A zone deleted and created again under its name since the list token: whatever its
    /// own feed answers from the old token (expired, or the new zone's changes) the first page
    /// agrees; from nil it is the new zone's records only.
    @Test(arguments: CloudKind.available) func aZoneDeletedAndCreatedAgain(_ kind: CloudKind) async throws {
        try await kind.run {
            let z = zone("phoenix")
            try await alice.saveZones([z])
            try await put(["old1", "old2"], in: z)
            let old = try await alice.fetchZoneChanges(z, since: nil, limit: 10).token
            let list = try await alice.fetchDatabaseChanges(since: nil).token
            try await alice.deleteZones([z])
            let gone = [CloudZonePageRequest(zone: z, since: old, limit: 10)]
            let afterDelete = try await alice.fetchDatabaseChanges(since: list, firstPages: gone)
            #expect(afterDelete.firstPages[z] == nil, "a zone that is gone gets no page")
            try await checkAgrees(afterDelete, since: list, requests: gone, in: alice, "deleted")

            try await alice.saveZones([z])
            try await put(["new"], in: z)
            let requests = [CloudZonePageRequest(zone: z, since: old, limit: 10)]
            let changes = try await alice.fetchDatabaseChanges(since: list, firstPages: requests)
            try await checkAgrees(changes, since: list, requests: requests, in: alice, "recreated, old token")
            if let page = changes.firstPages[z] {
                #expect(!page.changed.contains { $0.id.name.hasPrefix("old") }, "the old zone's records came back")
            }
            let fromNil = [CloudZonePageRequest(zone: z, since: nil, limit: 10)]
            let fresh = try await alice.fetchDatabaseChanges(since: list, firstPages: fromNil)
            #expect(fresh.firstPages[z]?.changed.map(\.id.name) == ["new"])
            try await checkAgrees(fresh, since: list, requests: fromNil, in: alice, "recreated, nil")
        }
    }

    /// A token the cloud never issued, and a token of another zone, get no page where the zone's
    /// own fetch refuses them, and the same page where it accepts them; the call answers.
    @Test(arguments: CloudKind.available) func foreignTokens(_ kind: CloudKind) async throws {
        try await kind.run {
            let (one, two) = (zone("one"), zone("two"))
            try await alice.saveZones([one, two])
            try await put(["a", "b", "c"], in: one)
            try await put(["x"], in: two)
            let twoToken = try await alice.fetchZoneChanges(two, since: nil, limit: 10).token
            let oneToken = try await alice.fetchZoneChanges(one, since: nil, limit: 1).token
            let requests = [
                CloudZonePageRequest(zone: one, since: twoToken, limit: 10),
                CloudZonePageRequest(zone: two, since: oneToken, limit: 10),
            ]
            let changes = try await alice.fetchDatabaseChanges(since: nil, firstPages: requests)
            try await checkAgrees(changes, since: nil, requests: requests, in: alice, "swapped tokens")
            for text in ["", "0", "-1", "999999999999", String(repeating: "A", count: 300), "null", "{}"] {
                let odd = [CloudZonePageRequest(zone: one, since: CloudChangeToken(text), limit: 10)]
                let answer = try await alice.fetchDatabaseChanges(since: nil, firstPages: odd)
                try await checkAgrees(answer, since: nil, requests: odd, in: alice, "token '\(text.prefix(20))'")
            }
        }
    }

    /// Through the shared database: the owner edits a shared and an unshared record; bob's
    /// page holds the shared one only, continued paging leaks nothing, an edit of unshared
    /// records alone gives bob no page with them, and after the share ends bob gets none.
    @Test(arguments: CloudKind.available) func aParticipantsPagesAcrossEditsAndTheShareEnding(_ kind: CloudKind) async throws {
        try await kind.run {
            let z = zone("club")
            try await alice.saveZones([z])
            let root = CloudRecordID(name: "g1:games", zone: z)
            try await put(["g1:games", "g2:games", "g3:games"], in: z)
            var share = CloudShare(rootRecordID: root, title: "Club")
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly))
            share = try await alice.saveShare(share)
            _ = try await cloud.container(user: "bob").acceptShare(url: share.url)
            let bob = cloud.container(user: "bob").sharedDatabase
            let children = (0..<4).map {
                CloudRecord(id: CloudRecordID(name: "p\($0):players", zone: z), type: "players", parent: root)
            }
            _ = try await alice.modifyRecords(saving: children, deleting: [])
            let start = try await bob.fetchDatabaseChanges(since: nil)
            let zoneStart = try await bob.fetchZoneChanges(z, since: nil, limit: 100).token
            let visible = Set(["g1:games"] + children.map(\.id.name))

            try await put(["g1:games", "g2:games"], in: z, title: "edited")
            _ = try await alice.modifyRecords(saving: [], deleting: [CloudRecordID(name: "p0:players", zone: z)])
            try await put(["g4:games"], in: z)
            for limit in [1, 2, 3] {
                let requests = [CloudZonePageRequest(zone: z, since: zoneStart, limit: limit)]
                let changes = try await bob.fetchDatabaseChanges(since: start.token, firstPages: requests)
                try await checkAgrees(changes, since: start.token, requests: requests, in: bob, "bob limit \(limit)")
                let first = try #require(changes.firstPages[z])
                var all = [Page(first)]
                if first.moreComing { all += try await ownPages(z, since: first.token, limit: limit, in: bob) }
                let names = all.flatMap { $0.changed.map(\.id.name) }
                #expect(Set(names).isSubset(of: visible), "limit \(limit): bob sees \(names)")
                #expect(names.contains("g1:games"))
                let deleted = all.flatMap { $0.deleted.map(\.id.name) }
                #expect(Set(deleted).isSubset(of: visible), "limit \(limit): bob's tombstones \(deleted)")
            }
            // From nil: every page only what bob may see.
            let fromNil = [CloudZonePageRequest(zone: z, since: nil, limit: 2)]
            let nilChanges = try await bob.fetchDatabaseChanges(since: nil, firstPages: fromNil)
            try await checkAgrees(nilChanges, since: nil, requests: fromNil, in: bob, "bob from nil")
            let nilNames = Set(nilChanges.firstPages[z]?.changed.map(\.id.name) ?? [])
            #expect(nilNames.isSubset(of: visible), "\(nilNames)")

            // Only unshared records change: whatever bob gets, nothing of them.
            let quiet = try await bob.fetchDatabaseChanges(since: nil)
            let quietZone = try await ownPages(z, since: nil, limit: 100, in: bob).last?.token
            try await put(["g2:games", "g5:games"], in: z, title: "hidden")
            _ = try await alice.modifyRecords(saving: [], deleting: [CloudRecordID(name: "g3:games", zone: z)])
            let hidden = [CloudZonePageRequest(zone: z, since: quietZone, limit: 10)]
            let unshared = try await bob.fetchDatabaseChanges(since: quiet.token, firstPages: hidden)
            try await checkAgrees(unshared, since: quiet.token, requests: hidden, in: bob, "unshared edits")
            if let page = unshared.firstPages[z] {
                #expect(page.changed.isEmpty && page.deleted.isEmpty, "bob sees unshared edits: \(Page(page))")
            }

            // The share ends: no page of alice's zone for bob.
            let beforeEnd = try await bob.fetchDatabaseChanges(since: nil).token
            try await alice.deleteShare(rootRecordID: root)
            try await put(["g1:games"], in: z, title: "after")
            let ended = [CloudZonePageRequest(zone: z, since: nil, limit: 10), CloudZonePageRequest(zone: z, since: zoneStart, limit: 10)]
            let afterEnd = try await bob.fetchDatabaseChanges(since: beforeEnd, firstPages: ended)
            #expect(
                afterEnd.firstPages[z].map { $0.changed.isEmpty } ?? true,
                "bob reads a zone no longer shared: \(afterEnd.firstPages[z].map(Page.init).map(\.description) ?? "")")
            try await checkAgrees(afterEnd, since: beforeEnd, requests: ended, in: bob, "after the share ended")
            let afterNil = try await bob.fetchDatabaseChanges(since: nil, firstPages: ended)
            #expect(afterNil.firstPages[z].map { $0.changed.isEmpty } ?? true)
            try await checkAgrees(afterNil, since: nil, requests: ended, in: bob, "after the share ended, nil")
        }
    }

    /// Mallory, a user the zone is not shared with, asks for the zone's page through both her
    /// databases, with alice's own token too: nothing.
    @Test(arguments: CloudKind.available) func aStrangerAskingForAZoneGetsNothing(_ kind: CloudKind) async throws {
        try await kind.run {
            let z = zone("private")
            try await alice.saveZones([z])
            try await put(["s1", "s2"], in: z)
            let aliceToken = try await alice.fetchZoneChanges(z, since: nil, limit: 1).token
            let mallory = cloud.container(user: "mallory")
            try await mallory.privateDatabase.saveZones([zone("private", owner: "mallory")])
            try await put(["m"], in: zone("private", owner: "mallory"), as: mallory.privateDatabase)
            for database in [mallory.privateDatabase, mallory.sharedDatabase] {
                let requests = [
                    CloudZonePageRequest(zone: z, since: nil, limit: 10), CloudZonePageRequest(zone: z, since: aliceToken, limit: 10),
                ]
                let changes = try await database.fetchDatabaseChanges(since: nil, firstPages: requests)
                #expect(changes.firstPages[z] == nil, "\(database.scope): mallory reads alice's zone")
                #expect(!changes.changedZones.contains(z))
            }
        }
    }

    /// A first page is read at one moment with its list: the database token it comes with,
    /// asked again with the first page's zone token, lists nothing and gives no page; saves
    /// after it show in the next call, none lost between the list and the page.
    @Test(arguments: CloudKind.available) func theListTokenAndThePageTokenMeet(_ kind: CloudKind) async throws {
        try await kind.run {
            let z = zone("meet")
            try await alice.saveZones([z])
            var list: CloudChangeToken? = nil
            var zoneToken: CloudChangeToken? = nil
            var seen: [String] = []
            for round in 0..<4 {
                try await put(["r\(round)a", "r\(round)b"], in: z)
                let changes = try await alice.fetchDatabaseChanges(
                    since: list, firstPages: [CloudZonePageRequest(zone: z, since: zoneToken, limit: 100)])
                let page = try #require(changes.firstPages[z], "round \(round)")
                #expect(!page.moreComing)
                seen += page.changed.map(\.id.name)
                list = changes.token
                zoneToken = page.token
                let again = try await alice.fetchDatabaseChanges(
                    since: list, firstPages: [CloudZonePageRequest(zone: z, since: zoneToken, limit: 100)])
                #expect(again.changedZones.isEmpty, "round \(round)")
                #expect(again.firstPages.isEmpty, "round \(round)")
            }
            #expect(seen == (0..<4).flatMap { ["r\($0)a", "r\($0)b"] })
        }
    }
    /// Writes land while a reader follows the database with first pages as an engine does
    /// (the list token, and the zone token of each page; the zone's own feed only when the
    /// list names it without a page): the list and the page are read at one moment, so no
    /// write is covered by a list token without being in a page. Afterwards the reader has
    /// seen every write.
    @Test(arguments: CloudKind.available) func writesDuringTheReadsAreNeverSkipped(_ kind: CloudKind) async throws {
        try await kind.run {
            let z = zone("busy")
            try await alice.saveZones([z])
            let writer = cloud.container(user: "alice").privateDatabase
            let reader = cloud.container(user: "alice").privateDatabase
            var list: CloudChangeToken? = nil
            var zoneToken: CloudChangeToken? = nil
            var seen: Set<String> = []
            func follow() async throws {
                let changes = try await reader.fetchDatabaseChanges(
                    since: list, firstPages: [CloudZonePageRequest(zone: z, since: zoneToken, limit: 1_000)])
                if changes.changedZones.contains(z) {
                    var page: CloudZoneChanges
                    if let first = changes.firstPages[z] {
                        page = first
                    } else {
                        page = try await reader.fetchZoneChanges(z, since: zoneToken, limit: 1_000)
                    }
                    while true {
                        seen.formUnion(page.changed.map(\.id.name))
                        zoneToken = page.token
                        if !page.moreComing { break }
                        page = try await reader.fetchZoneChanges(z, since: zoneToken, limit: 1_000)
                    }
                }
                list = changes.token
            }
            var names: [String] = []
            for burst in 0..<12 {
                let batch = (0..<5).map { "b\(burst)w\($0)" }
                names += batch
                let done = Atomic(false)
                let writing = Task {
                    defer { done.store(true, ordering: .releasing) }
                    for name in batch {
                        let record = CloudRecord(id: CloudRecordID(name: name, zone: z), type: "games")
                        _ = try await writer.modifyRecords(saving: [record], deleting: [])
                    }
                }
                var rounds = 0
                while !done.load(ordering: .acquiring) && rounds < 500 {
                    try await follow()
                    rounds += 1
                }
                try await writing.value
                try await follow()
                #expect(seen == Set(names), "burst \(burst): missing \(Set(names).subtracting(seen).sorted())")
            }
        }
    }
}
