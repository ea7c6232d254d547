import Foundation
import StrataCloudClient
import StrataCloudService
import StrataSync
import Testing

/// Sharing works through the service: the owner shares, the invitee accepts by URL and finds the
/// records in their shared database.
@Suite(.timeLimit(.minutes(5))) struct SharingThroughServiceTests {
    @Test func anAcceptedShareAppearsInTheSharedDatabase() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let alice = try await harness.container(user: "alice")
            let bob = try await harness.container(user: "bob")
            let zone = CloudScript.zone
            try await alice.privateDatabase.saveZones([zone])
            let root = CloudScript.record("g1", fields: ["title": .text("Poker")])
            let child = CloudScript.record("p1", parent: "g1", fields: ["name": .text("Ann")])
            _ = try await alice.privateDatabase.modifyRecords(saving: [root, child], deleting: [])

            var share = CloudShare(rootRecordID: root.id, title: "Poker night")
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
            let saved = try await alice.privateDatabase.saveShare(share)
            #expect(saved.isOwnedByCurrentUser)
            #expect(try await bob.sharedDatabase.fetchDatabaseChanges(since: nil).changedZones.isEmpty)

            let accepted = try await bob.acceptShare(url: saved.url)
            #expect(accepted.currentUser == "bob")
            #expect(accepted.currentUserParticipant?.acceptance == .accepted)
            #expect(try await bob.sharedDatabase.fetchDatabaseChanges(since: nil).changedZones == [zone])
            let changes = try await bob.sharedDatabase.fetchZoneChanges(zone, since: nil, limit: 100)
            #expect(Set(changes.changed.map(\.id.name)) == ["g1", "p1"])
            #expect(try await bob.sharedDatabase.fetchShare(rootRecordID: root.id).participant("bob")?.acceptance == .accepted)

            // A read-write participant edits through the shared database.
            let edited = try #require(changes.changed.first { $0.id.name == "p1" })
            var update = edited
            update.fields["name"] = .text("Bob")
            let result = try await bob.sharedDatabase.modifyRecords(saving: [update], deleting: [])
            #expect(try result.saveResults[update.id]?.get().fields["name"] == .text("Bob"))
            #expect(cloud.records(in: zone).first { $0.id.name == "p1" }?.fields["name"] == .text("Bob"))
        }
    }

    @Test func aStrangerCannotShareOrAccept() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let alice = try await harness.container(user: "alice")
            let carol = try await harness.container(user: "carol")
            try await alice.privateDatabase.saveZones([CloudScript.zone])
            let root = CloudScript.record("g1")
            _ = try await alice.privateDatabase.modifyRecords(saving: [root], deleting: [])
            let share = try await alice.privateDatabase.saveShare(CloudShare(rootRecordID: root.id))
            await #expect(throws: CloudError.permissionFailure(root.id)) { _ = try await carol.privateDatabase.saveShare(share) }
            await #expect(throws: CloudError.unknownItem(root.id)) { _ = try await carol.acceptShare(url: share.url) }
        }
    }
}
