import Foundation
import StrataSync
import Testing

/// Shares: what participants see and may do, and how shares end.
@Suite(.timeLimit(.minutes(5))) struct CloudSharingTests {
    var cloud: TestCloud { TestCloud.current }
    let zone = CloudZoneID(name: "zone", owner: "alice")
    var alice: any CloudDatabase { cloud.container(user: "alice").privateDatabase }
    let game = CloudRecordID(name: "g1:games", zone: CloudZoneID(name: "zone", owner: "alice"))
    let player = CloudRecordID(name: "p1:players", zone: CloudZoneID(name: "zone", owner: "alice"))
    let other = CloudRecordID(name: "g2:games", zone: CloudZoneID(name: "zone", owner: "alice"))

    /// Alice's zone: game g1 with player p1, and game g2 that is never shared.
    func seed() async throws {
        try await alice.saveZones([zone])
        _ = try await alice.modifyRecords(
            saving: [
                CloudRecord(id: game, type: "games", fields: ["title": .text("Poker")]),
                CloudRecord(id: player, type: "players", fields: ["name": .text("Blob")], parent: game),
                CloudRecord(id: other, type: "games", fields: ["title": .text("Secret")]),
            ],
            deleting: [])
    }

    /// Shares g1 with bob at `permission`, and bob accepts.
    @discardableResult
    func share(with permission: CloudShare.Permission, accept: Bool = true) async throws -> CloudShare {
        var share = CloudShare(rootRecordID: game, title: "Poker night")
        share.participants.append(CloudShare.Participant(user: "bob", permission: permission))
        share = try await alice.saveShare(share)
        // The URL as an engine hands it over: what the invitation grants, and a fragment of the
        // engine's own. Every cloud reads the root alone.
        if accept { share = try await cloud.container(user: "bob").acceptShare(url: share.url(inviting: permission) + "#k=1.x") }
        return share
    }

    func bobSees() async throws -> [String] {
        let shared = cloud.container(user: "bob").sharedDatabase
        return try await shared.fetchZoneChanges(zone, since: nil, limit: 100).changed.map(\.id.name).sorted()
    }

    @Test(arguments: CloudKind.available) func aParticipantSeesTheRootAndItsDescendantsOnlyOnceAccepted(_ kind: CloudKind) async throws {
        try await kind.run {
            try await seed()
            let share = try await share(with: .readOnly, accept: false)
            #expect(share.participant("bob")?.acceptance == .pending)
            #expect(share.participant("alice")?.role == .owner)
            let bob = cloud.container(user: "bob")
            #expect(try await bob.sharedDatabase.fetchDatabaseChanges(since: nil).changedZones.isEmpty)
            _ = try await bob.acceptShare(url: share.url)
            #expect(try await bobSees() == ["g1:games", "p1:players"])
            let fetched = try await bob.sharedDatabase.fetchRecords([game, other])
            #expect((try? fetched[game]?.get())?.fields["title"] == .text("Poker"))
            // A record outside the share is as unknown as a missing one: nothing tells bob it exists.
            #expect(fetched[other].map { if case .failure(.unknownItem) = $0 { true } else { false } } == true)
        }
    }

    /// Two roots whose names Swift calls equal but whose bytes differ: sharing one shares that
    /// one only. The participant sees it and its child, may write under it, and may not write
    /// the other root or move a child under it.
    @Test(arguments: CloudKind.available) func aShareOfOneOfTwoCanonicallyEquivalentRootsSharesThatOneOnly(
        _ kind: CloudKind
    ) async throws {
        try await kind.run {
            try await alice.saveZones([zone])
            let composed = CloudRecordID(name: "caf\u{E9}:games", zone: zone)
            let decomposed = CloudRecordID(name: "cafe\u{301}:games", zone: zone)
            #expect(composed.name == decomposed.name, "Swift calls them equal: the test's premise")
            let child = CloudRecordID(name: "c1:players", zone: zone)
            _ = try await alice.modifyRecords(
                saving: [
                    CloudRecord(id: composed, type: "games", fields: ["title": .text("shared")]),
                    CloudRecord(id: decomposed, type: "games", fields: ["title": .text("private")]),
                    CloudRecord(id: child, type: "players", parent: composed),
                ],
                deleting: [])
            var share = CloudShare(rootRecordID: composed, title: "Café")
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
            share = try await alice.saveShare(share)
            let bob = cloud.container(user: "bob")
            _ = try await bob.acceptShare(url: share.url(inviting: .readWrite))
            let seen = try await bob.sharedDatabase.fetchZoneChanges(zone, since: nil, limit: 100).changed.map(\.id)
            #expect(Set(seen.map { Array($0.name.utf8) }) == Set([composed, child].map { Array($0.name.utf8) }))

            // The other root is out of bob's reach, and so is moving the child under it.
            let intoPrivate = CloudRecord(id: decomposed, type: "games", fields: ["title": .text("hacked")])
            let refused = try await bob.sharedDatabase.modifyRecords(saving: [intoPrivate], deleting: [])
            #expect(refused.saveResults[decomposed].map { if case .failure = $0 { true } else { false } } == true)
            var moved = try #require(try await bob.sharedDatabase.fetchRecords([child])[child]?.get())
            moved.parent = decomposed
            let move = try await bob.sharedDatabase.modifyRecords(saving: [moved], deleting: [])
            #expect(move.saveResults[child].map { if case .failure = $0 { true } else { false } } == true)
            let held = try await alice.fetchRecords([decomposed, child])
            #expect(try held[decomposed]?.get().fields["title"] == .text("private"))
            #expect(try held[child]?.get().parent == composed)
            #expect(try held[child]?.get().parent?.name.utf8.elementsEqual(composed.name.utf8) == true)

            // Under the shared root bob may write.
            var renamed = try #require(try await bob.sharedDatabase.fetchRecords([composed])[composed]?.get())
            renamed.fields["title"] = .text("shared, edited")
            let edit = try await bob.sharedDatabase.modifyRecords(saving: [renamed], deleting: [])
            #expect((try? edit.saveResults[composed]?.get()) != nil)
        }
    }

    @Test(arguments: CloudKind.available) func aUserNeverInvitedCanNeitherJoinNorReadNorWrite(_ kind: CloudKind) async throws {
        try await kind.run {
            try await seed()
            let share = try await share(with: .readWrite)
            let eve = cloud.container(user: "eve")
            await #expect(throws: CloudError.unknownItem(game)) { _ = try await eve.acceptShare(url: share.url) }
            await #expect(throws: CloudError.permissionFailure(nil)) {
                _ = try await eve.sharedDatabase.fetchZoneChanges(self.zone, since: nil, limit: 10)
            }
            let results = try await eve.sharedDatabase.modifyRecords(
                saving: [CloudRecord(id: CloudRecordID(name: "p9:players", zone: zone), type: "players", parent: game)], deleting: [])
            #expect(results.saveResults.values.allSatisfy { if case .failure(.permissionFailure) = $0 { true } else { false } })
            #expect(try await eve.sharedDatabase.fetchDatabaseChanges(since: nil).changedZones.isEmpty)
        }
    }

    @Test(arguments: CloudKind.available) func aPublicShareLetsAnyoneJoinWithItsPermission(_ kind: CloudKind) async throws {
        try await kind.run {
            try await seed()
            var share = CloudShare(rootRecordID: game, publicPermission: .readOnly)
            share = try await alice.saveShare(share)
            let joined = try await cloud.container(user: "carol").acceptShare(url: share.url)
            #expect(
                joined.participant("carol")
                    == CloudShare.Participant(user: "carol", role: .publicUser, permission: .readOnly, acceptance: .accepted))
        }
    }

    @Test(arguments: CloudKind.available) func aReadWriteParticipantEditsAndAddsChildrenButCannotReachOutsideTheShare(
        _ kind: CloudKind
    ) async throws {
        try await kind.run {
            try await seed()
            try await share(with: .readWrite)
            let shared = cloud.container(user: "bob").sharedDatabase
            let current = try #require(try await shared.fetchRecords([player])[player]?.get())
            var edited = current
            edited.fields["name"] = .text("Blob Jr")
            let newChild = CloudRecord(id: CloudRecordID(name: "p2:players", zone: zone), type: "players", parent: game)
            let result = try await shared.modifyRecords(saving: [edited, newChild], deleting: [])
            #expect(result.saveResults.values.allSatisfy { (try? $0.get()) != nil })
            #expect(try await bobSees() == ["g1:games", "p1:players", "p2:players"])
            // Moving a shared child under a game that is not shared would take it out of the share.
            var moved = try #require(try await shared.fetchRecords([player])[player]?.get())
            moved.parent = other
            let refused = try await shared.modifyRecords(saving: [moved], deleting: [])
            #expect(refused.saveResults[player].map { if case .failure(.permissionFailure) = $0 { true } else { false } } == true)
            // The shared root is the owner's to delete.
            let rootDelete = try await shared.modifyRecords(saving: [], deleting: [game])
            #expect(rootDelete.deleteResults[game].map { if case .failure(.permissionFailure) = $0 { true } else { false } } == true)
        }
    }

    @Test(arguments: CloudKind.available) func aReadOnlyParticipantsWritesAreRefusedAndChangeNothing(_ kind: CloudKind) async throws {
        try await kind.run {
            try await seed()
            try await share(with: .readOnly)
            let shared = cloud.container(user: "bob").sharedDatabase
            var edited = try #require(try await shared.fetchRecords([player])[player]?.get())
            edited.fields["name"] = .text("Hacked")
            let result = try await shared.modifyRecords(saving: [edited], deleting: [player])
            #expect(result.saveResults[player].map { if case .failure(.permissionFailure) = $0 { true } else { false } } == true)
            #expect(try await cloud.records(in: zone).first { $0.id == player }?.fields["name"] == .text("Blob"))
        }
    }

    @Test(arguments: CloudKind.available) func theOwnerRemovingAParticipantTakesTheZoneOutOfTheirSharedDatabase(
        _ kind: CloudKind
    ) async throws {
        try await kind.run {
            try await seed()
            var share = try await share(with: .readWrite)
            let bob = cloud.container(user: "bob").sharedDatabase
            let token = try await bob.fetchDatabaseChanges(since: nil).token
            share.participants.removeAll { $0.user == "bob" }
            share = try await alice.saveShare(share)
            let changes = try await bob.fetchDatabaseChanges(since: token)
            #expect(changes.deletedZones == [zone])
            #expect(changes.changedZones.isEmpty)
            await #expect(throws: CloudError.unknownItem(game)) { _ = try await cloud.container(user: "bob").acceptShare(url: share.url) }
        }
    }

    @Test(arguments: CloudKind.available) func aParticipantLeavingEndsTheShareForThemOnly(_ kind: CloudKind) async throws {
        try await kind.run {
            try await seed()
            var share = CloudShare(rootRecordID: game)
            share.participants += [
                CloudShare.Participant(user: "bob", permission: .readWrite), CloudShare.Participant(user: "carol", permission: .readOnly),
            ]
            share = try await alice.saveShare(share)
            _ = try await cloud.container(user: "bob").acceptShare(url: share.url)
            _ = try await cloud.container(user: "carol").acceptShare(url: share.url)
            try await cloud.container(user: "bob").sharedDatabase.deleteShare(rootRecordID: game)
            #expect(try await cloud.share(of: game)?.participant("bob")?.acceptance == .removed)
            await #expect(throws: CloudError.permissionFailure(nil)) {
                _ = try await cloud.container(user: "bob").sharedDatabase.fetchZoneChanges(self.zone, since: nil, limit: 10)
            }
            let carol = cloud.container(user: "carol").sharedDatabase
            #expect(try await carol.fetchZoneChanges(zone, since: nil, limit: 10).changed.count == 2)
            #expect(try await cloud.records(in: zone).count == 3)
        }
    }

    @Test(arguments: CloudKind.available) func theOwnerEndingTheShareOrDeletingTheRootEndsItForEveryone(_ kind: CloudKind) async throws {
        try await kind.run {
            try await seed()
            let share = try await share(with: .readWrite)
            try await alice.deleteShare(rootRecordID: game)
            #expect(try await cloud.share(of: game) == nil)
            #expect(try await cloud.records(in: zone).count == 3)
            await #expect(throws: CloudError.permissionFailure(nil)) {
                _ = try await cloud.container(user: "bob").sharedDatabase.fetchZoneChanges(self.zone, since: nil, limit: 10)
            }
            // Shared again, then the owner deletes the root and its child.
            var again = CloudShare(rootRecordID: game)
            again.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
            _ = try await alice.saveShare(again)
            _ = try await cloud.container(user: "bob").acceptShare(url: share.url)
            let bob = cloud.container(user: "bob").sharedDatabase
            let token = try await bob.fetchDatabaseChanges(since: nil).token
            _ = try await alice.modifyRecords(saving: [], deleting: [player, game])
            #expect(try await cloud.share(of: game) == nil)
            #expect(try await bob.fetchDatabaseChanges(since: token).deletedZones == [zone])
        }
    }

    @Test(arguments: CloudKind.available) func aParticipantSeesDeletionsInsideTheShareOnly(_ kind: CloudKind) async throws {
        try await kind.run {
            try await seed()
            try await share(with: .readWrite)
            let bob = cloud.container(user: "bob").sharedDatabase
            let first = try await bob.fetchZoneChanges(zone, since: nil, limit: 100)
            _ = try await alice.modifyRecords(saving: [], deleting: [player, other])
            let next = try await bob.fetchZoneChanges(zone, since: first.token, limit: 100)
            #expect(next.deleted.map(\.id) == [player])
        }
    }

    @Test(arguments: CloudKind.available) func onlyTheOwnerSavesAShareAndOnlyOfARecordThatExists(_ kind: CloudKind) async throws {
        try await kind.run {
            try await seed()
            let share = try await share(with: .readWrite)
            await #expect(throws: CloudError.permissionFailure(game)) {
                _ = try await cloud.container(user: "bob").sharedDatabase.saveShare(share)
            }
            let missing = CloudRecordID(name: "g9:games", zone: zone)
            await #expect(throws: CloudError.unknownItem(missing)) { _ = try await alice.saveShare(CloudShare(rootRecordID: missing)) }
        }
    }

    @Test func shareURLsRoundTrip() {
        let share = CloudShare(rootRecordID: game)
        #expect(CloudShare.rootRecordID(fromURL: share.url) == game)
        #expect(CloudShare.rootRecordID(fromURL: "https://example.com") == nil)
    }

    /// Bob's feed of the zone after `token`: what changed and what went, and the next token.
    func bobChanges(since token: CloudChangeToken?) async throws -> (changed: [String], deleted: [String], token: CloudChangeToken) {
        let page = try await cloud.container(user: "bob").sharedDatabase.fetchZoneChanges(zone, since: token, limit: 100)
        return (page.changed.map(\.id.name).sorted(), page.deleted.map(\.id.name).sorted(), page.token)
    }

    @Test(arguments: CloudKind.available) func aRecordMovedIntoAShareArrivesWithItsSubtreeAndOneMovedOutIsGoneForTheParticipant(
        _ kind: CloudKind
    ) async throws {
        try await kind.run {
            try await seed()
            let turn = CloudRecordID(name: "t1:turns", zone: zone)
            let secretPlayer = CloudRecordID(name: "p2:players", zone: zone)
            _ = try await alice.modifyRecords(
                saving: [
                    CloudRecord(id: secretPlayer, type: "players", fields: ["name": .text("Hidden")], parent: other),
                    CloudRecord(id: turn, type: "turns", fields: ["points": .integer(3)], parent: secretPlayer),
                ],
                deleting: [])
            try await share(with: .readOnly)
            let start = try await bobChanges(since: nil)
            #expect(start.changed == ["g1:games", "p1:players"])

            // Alice moves p2 (and with it t1) from the private game into the shared one.
            var moved = try #require(try await alice.fetchRecords([secretPlayer])[secretPlayer]?.get())
            moved.parent = game
            _ = try await alice.modifyRecords(saving: [moved], deleting: [])
            let arrived = try await bobChanges(since: start.token)
            #expect(arrived.changed.contains("p2:players") && arrived.changed.contains("t1:turns"))
            #expect(arrived.deleted.isEmpty)

            // And back out: bob's feed reports both gone, alice's own feed reports nothing deleted.
            moved = try #require(try await alice.fetchRecords([secretPlayer])[secretPlayer]?.get())
            moved.parent = other
            let aliceBefore = try await alice.fetchZoneChanges(zone, since: nil, limit: 100).token
            _ = try await alice.modifyRecords(saving: [moved], deleting: [])
            let left = try await bobChanges(since: arrived.token)
            #expect(left.deleted == ["p2:players", "t1:turns"])
            #expect(left.changed.isEmpty)
            #expect(try await alice.fetchZoneChanges(zone, since: aliceBefore, limit: 100).deleted.isEmpty)
            #expect(try await bobSees() == ["g1:games", "p1:players"])
        }
    }

    @Test(arguments: CloudKind.available) func whenOneOfTwoSharesInAZoneEndsTheParticipantSeesOnlyItsRecordsGo(
        _ kind: CloudKind
    ) async throws {
        try await kind.run {
            try await seed()
            let player3 = CloudRecordID(name: "p3:players", zone: zone)
            _ = try await alice.modifyRecords(saving: [CloudRecord(id: player3, type: "players", parent: other)], deleting: [])
            try await share(with: .readWrite)
            var second = CloudShare(rootRecordID: other)
            second.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly))
            second = try await alice.saveShare(second)
            _ = try await cloud.container(user: "bob").acceptShare(url: second.url)
            let start = try await bobChanges(since: nil)
            #expect(start.changed == ["g1:games", "g2:games", "p1:players", "p3:players"])
            let zonesSeen = try await cloud.container(user: "bob").sharedDatabase.fetchDatabaseChanges(since: nil).token

            try await alice.deleteShare(rootRecordID: game)
            let afterUnshare = try await bobChanges(since: start.token)
            #expect(afterUnshare.deleted == ["g1:games", "p1:players"])
            #expect(try await cloud.container(user: "bob").sharedDatabase.fetchDatabaseChanges(since: nil).changedZones == [zone])

            // The second share's records deleted by alice still reach bob as deletions; once its
            // root goes, bob has no share left and the zone is gone for him.
            _ = try await alice.modifyRecords(saving: [], deleting: [player3])
            let afterDelete = try await bobChanges(since: afterUnshare.token)
            #expect(afterDelete.deleted == ["p3:players"])
            _ = try await alice.modifyRecords(saving: [], deleting: [other])
            #expect(try await cloud.container(user: "bob").sharedDatabase.fetchDatabaseChanges(since: zonesSeen).deletedZones == [zone])
        }
    }

    @Test func aShareURLCarriesAnyNamesAndNothingElseParsesAsOne() {
        let root = CloudRecordID(name: "7/8:games", zone: CloudZoneID(name: "zone %1", owner: "Blob Jr"))
        let url = CloudShare(rootRecordID: root).url
        #expect(url == "strata-share://Blob%20Jr/zone%20%251/7%2F8:games")
        #expect(CloudShare.rootRecordID(fromURL: url) == root)
        for bad in ["https://x/y/z", "strata-share://a/b", "strata-share://a//c", "strata-share://a/b/c/d", "strata-share://a/%zz/c"] {
            #expect(CloudShare.rootRecordID(fromURL: bad) == nil, "\(bad)")
        }
    }

    @Test func anInvitationURLSaysWhatItGrants() {
        let root = CloudRecordID(name: "g?1:games", zone: CloudZoneID(name: "z#1", owner: "Blob"))
        let share = CloudShare(rootRecordID: root)
        for permission in [CloudShare.Permission.readOnly, .readWrite] {
            let url = share.url(inviting: permission)
            #expect(url.hasSuffix("?permission=\(permission.rawValue)"))
            #expect(CloudShare.rootRecordID(fromURL: url) == root)
            #expect(CloudShare.invitation(fromURL: url) == CloudShare.Invitation(rootRecordID: root, permission: permission))
            #expect(CloudShare.invitation(fromURL: url + "#k=1.abc")?.permission == permission)
        }
        // Names holding ? and # are percent-encoded, so they never read as a query or fragment.
        #expect(share.url == "strata-share://Blob/z%231/g%3F1:games")
        #expect(CloudShare.invitation(fromURL: share.url) == CloudShare.Invitation(rootRecordID: root, permission: nil))
        #expect(CloudShare.invitation(fromURL: share.url + "?other=1&permission=readOnly")?.permission == .readOnly)
        for bad in ["?permission=none", "?permission=admin", "?permission="] {
            #expect(CloudShare.invitation(fromURL: share.url + bad) == nil, "\(bad)")
        }
        #expect(
            CloudShare.rootRecordID(fromURL: "strata-share://a/b/c?x") == CloudRecordID(name: "c", zone: CloudZoneID(name: "b", owner: "a"))
        )
    }
}
