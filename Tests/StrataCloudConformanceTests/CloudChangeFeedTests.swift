import Foundation
import StrataSync
import Testing

/// Change feeds: paged records and tombstones since a token, changed and deleted zones,
/// expired tokens.
@Suite(.timeLimit(.minutes(5))) struct CloudChangeFeedTests {
    var cloud: TestCloud { TestCloud.current }
    let zone = CloudZoneID(name: "zone", owner: "alice")
    var database: any CloudDatabase { cloud.container(user: "alice").privateDatabase }

    func put(_ names: [String]) async throws {
        let records = names.map { CloudRecord(id: CloudRecordID(name: $0, zone: zone), type: "games") }
        _ = try await database.modifyRecords(saving: records, deleting: [])
    }

    @Test(arguments: CloudKind.available) func changesArePagedAndDeletesAreTombstones(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await put(["a", "b", "c"])
            _ = try await database.modifyRecords(saving: [], deleting: [CloudRecordID(name: "b", zone: zone)])
            let first = try await database.fetchZoneChanges(zone, since: nil, limit: 1)
            #expect(first.changed.map(\.id.name) == ["a"] && first.moreComing)
            let rest = try await database.fetchZoneChanges(zone, since: first.token, limit: 10)
            #expect(rest.changed.map(\.id.name) == ["c"])
            #expect(rest.deleted == [CloudTombstone(id: CloudRecordID(name: "b", zone: zone), type: "games")])
            #expect(!rest.moreComing)
            let nothing = try await database.fetchZoneChanges(zone, since: rest.token, limit: 10)
            #expect(nothing.changed.isEmpty && nothing.deleted.isEmpty)
        }
    }

    /// Every cloud estimates what waits after a page (issue #27): exactly, for records each
    /// saved once; never below the truth, whatever came since; 0 on the last page.
    @Test(arguments: CloudKind.available) func pagesEstimateWhatRemains(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await put(["a", "b", "c", "d", "e"])
            var token: CloudChangeToken?
            var estimates: [Int?] = []
            while true {
                let page = try await database.fetchZoneChanges(zone, since: token, limit: 2)
                estimates.append(page.remainingEstimate)
                token = page.token
                if !page.moreComing { break }
            }
            #expect(estimates == [3, 1, 0])
            // Saves and deletes since: never less than what comes.
            try await put(["f", "g"])
            _ = try await database.modifyRecords(saving: [], deleting: [CloudRecordID(name: "b", zone: zone)])
            let first = try await database.fetchZoneChanges(zone, since: token, limit: 1)
            #expect(first.moreComing)
            let rest = try await database.fetchZoneChanges(zone, since: first.token, limit: 100)
            let remaining = rest.changed.count + rest.deleted.count
            #expect(remaining == 2)
            #expect((first.remainingEstimate ?? 0) >= remaining)
            #expect(rest.remainingEstimate == 0)
        }
    }

    /// A parent that gains children gets a new tag; the feed lists it before those children,
    /// so a device reading the feed in pages never gets a child whose parent is on a later
    /// page (it would have to wait for it).
    @Test(arguments: CloudKind.available) func aParentThatGainsChildrenComesBeforeThemInTheFeed(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await put(["p", "q"])
            let start = try await database.fetchZoneChanges(zone, since: nil, limit: 10)
            let token = start.token
            let qTag = start.changed.first { $0.id.name == "q" }?.changeTag
            let parent = CloudRecordID(name: "p", zone: zone)
            let children = ["c1", "c2", "c3"].map { CloudRecord(id: CloudRecordID(name: $0, zone: zone), type: "players", parent: parent) }
            // "q" is saved with a child of its own in the same request: its save is its new tag.
            let saves =
                children + [
                    CloudRecord(id: CloudRecordID(name: "d1", zone: zone), type: "players", parent: CloudRecordID(name: "q", zone: zone)),
                    CloudRecord(id: CloudRecordID(name: "q", zone: zone), type: "games", changeTag: qTag),
                ]
            let result = try await database.modifyRecords(saving: saves, deleting: [])
            var order: [String] = []
            var next: CloudChangeToken? = token
            for _ in 0..<10 {
                let page = try await database.fetchZoneChanges(zone, since: next, limit: 1)
                order += page.changed.map(\.id.name)
                next = page.token
                if !page.moreComing { break }
            }
            #expect(order == ["p", "c1", "c2", "c3", "d1", "q"])
            // The tags a client was told are the ones the cloud holds.
            let q = CloudRecordID(name: "q", zone: zone)
            let held = try await database.fetchRecords([q])
            #expect(try result.saveResults[q]?.get().changeTag == held[q]?.get().changeTag)
        }
    }

    /// A parent the request names only as a parent (the store reads of it only whether it
    /// exists, its parent and its shared root): it keeps its fields and versions when it gains
    /// a child; a child of a parent that does not exist, or that the same request deletes, is
    /// refused, and the whole request with it.
    @Test(arguments: CloudKind.available) func aParentNamedOnlyAsAParentKeepsWhatItHolds(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let version = HybridTimestamp(milliseconds: 5, counter: 1, node: "n")
            let parent = CloudRecord(
                id: CloudRecordID(name: "p", zone: zone), type: "games", fields: ["title": .text("kept"), "score": .integer(7)],
                fieldVersions: ["title": version, "score": version])
            _ = try await database.modifyRecords(saving: [parent], deleting: [])
            let child = CloudRecord(id: CloudRecordID(name: "c", zone: zone), type: "players", parent: parent.id)
            let saved = try await database.modifyRecords(saving: [child], deleting: [])
            #expect((try? saved.saveResults[child.id]?.get()) != nil)
            let held = try await database.fetchRecords([parent.id])
            let after = try #require(try held[parent.id]?.get())
            #expect(after.fields == parent.fields)
            #expect(after.fieldVersions == parent.fieldVersions)

            let orphan = CloudRecord(
                id: CloudRecordID(name: "o", zone: zone), type: "players", parent: CloudRecordID(name: "none", zone: zone))
            let refused = try await database.modifyRecords(saving: [orphan], deleting: [])
            guard case .failure(.referenceViolation)? = refused.saveResults[orphan.id] else {
                Issue.record("a child of a missing parent: \(String(describing: refused.saveResults[orphan.id]))")
                return
            }
            let late = CloudRecord(id: CloudRecordID(name: "late", zone: zone), type: "players", parent: parent.id)
            let both = try await database.modifyRecords(saving: [late], deleting: [parent.id, child.id])
            guard case .failure(.referenceViolation)? = both.saveResults[late.id] else {
                Issue.record("a child of a parent deleted beside it: \(String(describing: both.saveResults[late.id]))")
                return
            }
            #expect(try await database.fetchRecords([parent.id])[parent.id].map { try $0.get().fields } == parent.fields)
        }
    }

    /// Names that Swift's `String ==` calls equal but whose bytes differ (a precomposed letter,
    /// and the same letter with a combining mark) are two records on every cloud: saved
    /// together, each a parent of its own child, fetched, and deleted one at a time.
    @Test(arguments: CloudKind.available) func canonicallyEquivalentNamesAreTwoRecords(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let (composed, decomposed) = ("caf\u{E9}:games", "cafe\u{301}:games")
            #expect(composed == decomposed, "Swift calls them equal: the test's premise")
            let parents = [composed, decomposed].enumerated().map { index, name in
                CloudRecord(id: CloudRecordID(name: name, zone: zone), type: "games", fields: ["title": .text("t\(index)")])
            }
            let children = parents.enumerated().map { index, parent in
                CloudRecord(id: CloudRecordID(name: "c\(index):players", zone: zone), type: "players", parent: parent.id)
            }
            let saved = try await database.modifyRecords(saving: parents + children, deleting: [])
            #expect(saved.saveResults.count == 4)
            for record in parents + children {
                #expect((try? saved.saveResults[record.id]?.get()) != nil, "\(record.id.name.unicodeScalars.map(\.value))")
            }
            let feed = try await database.fetchZoneChanges(zone, since: nil, limit: 10)
            #expect(Set(feed.changed.map { Array($0.id.name.utf8) }) == Set((parents + children).map { Array($0.id.name.utf8) }))
            let fetched = try await database.fetchRecords(parents.map(\.id))
            for parent in parents {
                #expect(try fetched[parent.id]?.get().fields == parent.fields)
            }
            // The first parent goes with its child; the second and its child stay.
            let deleted = try await database.modifyRecords(saving: [], deleting: [children[0].id, parents[0].id])
            #expect(deleted.deleteResults.values.allSatisfy { (try? $0.get()) != nil })
            let after = try await database.fetchZoneChanges(zone, since: feed.token, limit: 10)
            #expect(Set(after.deleted.map { Array($0.id.name.utf8) }) == Set([children[0], parents[0]].map { Array($0.id.name.utf8) }))
            let left = try await database.fetchRecords([parents[1].id])
            #expect(try left[parents[1].id]?.get().fields == parents[1].fields)
        }
    }

    @Test(arguments: CloudKind.available) func aTokenFromBeforeAPurgeHasExpired(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await put(["a"])
            let token = try await database.fetchZoneChanges(zone, since: nil, limit: 10).token
            try await cloud.purgeTombstones(in: zone)
            await #expect(throws: CloudError.changeTokenExpired) {
                _ = try await database.fetchZoneChanges(zone, since: token, limit: 10)
            }
            #expect(try await database.fetchZoneChanges(zone, since: nil, limit: 10).changed.count == 1)
        }
    }

    /// A zone fetched from scratch after a purge pages through to its end: the pages' tokens
    /// sit before the purge point, and used to expire one by one, so a device started the zone
    /// over forever. A purge during the paging still expires them (deletions may be gone).
    @Test(arguments: CloudKind.available) func aZoneFetchedFromScratchAfterAPurgePagesToItsEnd(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await put(["a", "b", "c"])
            _ = try await database.modifyRecords(saving: [], deleting: [CloudRecordID(name: "b", zone: zone)])
            try await cloud.purgeTombstones(in: zone)
            var token: CloudChangeToken?
            var names: [String] = []
            for _ in 0..<10 {
                let page = try await database.fetchZoneChanges(zone, since: token, limit: 1)
                names += page.changed.map(\.id.name)
                token = page.token
                if !page.moreComing { break }
            }
            #expect(names == ["a", "c"])
            let caughtUp = try await database.fetchZoneChanges(zone, since: token, limit: 10)
            #expect(caughtUp.changed.isEmpty && caughtUp.deleted.isEmpty)
            let first = try await database.fetchZoneChanges(zone, since: nil, limit: 1)
            try await cloud.purgeTombstones(in: zone)
            await #expect(throws: CloudError.changeTokenExpired) {
                _ = try await database.fetchZoneChanges(zone, since: first.token, limit: 1)
            }
            // The finished fetch's token, from before that purge, has expired too.
            await #expect(throws: CloudError.changeTokenExpired) {
                _ = try await database.fetchZoneChanges(zone, since: token, limit: 10)
            }
        }
    }

    @Test(arguments: CloudKind.available) func databaseChangesNameChangedAndDeletedZones(_ kind: CloudKind) async throws {
        try await kind.run {
            let other = CloudZoneID(name: "other", owner: "alice")
            try await database.saveZones([zone, other])
            let start = try await database.fetchDatabaseChanges(since: nil)
            #expect(start.changedZones == [other, zone])
            try await put(["a"])
            try await database.deleteZones([other])
            let changes = try await database.fetchDatabaseChanges(since: start.token)
            #expect(changes.changedZones == [zone])
            #expect(changes.deletedZones == [other])
            #expect(try await cloud.zones(owner: "alice") == [zone])
        }
    }

    @Test(arguments: CloudKind.available) func anotherUsersPrivateZoneIsInvisible(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await put(["a"])
            let bob = cloud.container(user: "bob").privateDatabase
            #expect(try await bob.fetchDatabaseChanges(since: nil).changedZones.isEmpty)
            await #expect(throws: CloudError.permissionFailure(nil)) {
                _ = try await bob.fetchZoneChanges(zone, since: nil, limit: 10)
            }
        }
    }

    @Test(arguments: CloudKind.available) func anAcceptedShareAppearsInTheSharedDatabase(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await put(["a"])
            var share = CloudShare(rootRecordID: CloudRecordID(name: "a", zone: zone))
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly))
            share = try await database.saveShare(share)
            let bob = cloud.container(user: "bob")
            _ = try await bob.acceptShare(url: share.url)
            #expect(try await bob.sharedDatabase.fetchDatabaseChanges(since: nil).changedZones == [zone])
            #expect(try await bob.sharedDatabase.fetchZoneChanges(zone, since: nil, limit: 10).changed.count == 1)
        }
    }

    @Test(arguments: CloudKind.available) func twoDevicesOfOneUserSeeTheSameData(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await put(["a"])
            let laptop = cloud.container(user: "alice").privateDatabase
            #expect(try await laptop.fetchZoneChanges(zone, since: nil, limit: 10).changed.map(\.id.name) == ["a"])
        }
    }

    @Test(arguments: CloudKind.available) func otherDevicesHearAChangeHint(_ kind: CloudKind) async throws {
        try await kind.run {
            let phone = cloud.container(user: "alice")
            let laptop = cloud.container(user: "alice")
            var hints = laptop.changeHints().makeAsyncIterator()
            try await phone.privateDatabase.saveZones([zone])
            #expect(await hints.next() != nil)
        }
    }
}
