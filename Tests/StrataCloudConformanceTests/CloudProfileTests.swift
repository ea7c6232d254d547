import Foundation
import StrataSync
import Testing

/// Users' profiles: the names (and email addresses) that participants of shares carry, the
/// same on every cloud.
@Suite(.timeLimit(.minutes(5))) struct CloudProfileTests {
    var cloud: TestCloud { TestCloud.current }
    let zone = CloudZoneID(name: "zone", owner: "alice")
    let game = CloudRecordID(name: "g1:games", zone: CloudZoneID(name: "zone", owner: "alice"))

    /// Alice's game g1, shared with bob read-write; pending until bob accepts.
    func share(title: String = "Poker night") async throws -> CloudShare {
        let alice = cloud.container(user: "alice").privateDatabase
        try await alice.saveZones([zone])
        _ = try await alice.modifyRecords(saving: [CloudRecord(id: game, type: "games")], deleting: [])
        var share = CloudShare(rootRecordID: game, title: title)
        share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
        return try await alice.saveShare(share)
    }

    func names(_ share: CloudShare) -> [String: String?] {
        Dictionary(uniqueKeysWithValues: share.participants.map { ($0.user, $0.displayName) })
    }

    @Test(arguments: CloudKind.available) func participantsCarryTheNamesOfTheirProfiles(_ kind: CloudKind) async throws {
        try await kind.run {
            let (alice, bob) = (cloud.container(user: "alice"), cloud.container(user: "bob"))
            #expect(try await alice.userProfile() == nil)
            try await alice.setUserProfile(CloudUserProfile(displayName: "  Alice Liddell\n", email: "alice@example.com"))
            try await bob.setUserProfile(CloudUserProfile(displayName: "Bob"))
            // Stored trimmed, and each user reads their own.
            #expect(try await alice.userProfile() == CloudUserProfile(displayName: "Alice Liddell", email: "alice@example.com"))
            #expect(try await bob.userProfile() == CloudUserProfile(displayName: "Bob"))

            let saved = try await share()
            // Invited is not joined: nothing of bob shows before he accepts.
            #expect(names(saved) == ["alice": "Alice Liddell", "bob": nil])
            #expect(saved.participant("alice")?.email == "alice@example.com")
            #expect(saved.participant("bob")?.email == nil)

            let accepted = try await bob.acceptShare(url: saved.url)
            #expect(names(accepted) == ["alice": "Alice Liddell", "bob": "Bob"])
            #expect(accepted.participant("alice")?.email == "alice@example.com")
            let bobsView = try await bob.sharedDatabase.fetchShare(rootRecordID: game)
            #expect(names(bobsView) == ["alice": "Alice Liddell", "bob": "Bob"])
            let alicesView = try await alice.privateDatabase.fetchShare(rootRecordID: game)
            #expect(names(alicesView) == ["alice": "Alice Liddell", "bob": "Bob"])
            #expect(alicesView.participant("bob")?.acceptance == .accepted)

            // A profile changed later shows in the shares returned from then on.
            try await bob.setUserProfile(CloudUserProfile(displayName: "Robert", email: "bob@example.org"))
            let later = try await alice.privateDatabase.fetchShare(rootRecordID: game)
            #expect(later.participant("bob")?.displayName == "Robert")
            #expect(later.participant("bob")?.email == "bob@example.org")
            #expect(try await bob.sharedDatabase.fetchShare(rootRecordID: game).participant("bob")?.displayName == "Robert")
        }
    }

    /// Anyone can put any user id into a share: an invitation must not reveal the invitee's
    /// name or email to the owner or the other participants until the invitee accepts. The
    /// invitee sees who invited them, and who joined.
    @Test(arguments: CloudKind.available) func anInvitationRevealsNothingOfTheInviteeUntilTheyAccept(_ kind: CloudKind) async throws {
        try await kind.run {
            let (alice, bob, carol) = (cloud.container(user: "alice"), cloud.container(user: "bob"), cloud.container(user: "carol"))
            try await alice.setUserProfile(CloudUserProfile(displayName: "Alice"))
            try await bob.setUserProfile(CloudUserProfile(displayName: "Bob", email: "bob@example.com"))
            try await carol.setUserProfile(CloudUserProfile(displayName: "Carol", email: "carol@example.com"))
            let saved = try await share()
            _ = try await bob.acceptShare(url: saved.url)
            var invitingCarol = try await alice.privateDatabase.fetchShare(rootRecordID: game)
            invitingCarol.participants.append(CloudShare.Participant(user: "carol", permission: .readOnly))
            let invited = try await alice.privateDatabase.saveShare(invitingCarol)
            #expect(names(invited) == ["alice": "Alice", "bob": "Bob", "carol": nil])
            #expect(invited.participant("carol")?.email == nil)
            #expect(names(try await bob.sharedDatabase.fetchShare(rootRecordID: game)) == ["alice": "Alice", "bob": "Bob", "carol": nil])

            let accepted = try await carol.acceptShare(url: saved.url)
            #expect(names(accepted) == ["alice": "Alice", "bob": "Bob", "carol": "Carol"])
            #expect(accepted.participant("bob")?.email == "bob@example.com")
            let alicesView = try await alice.privateDatabase.fetchShare(rootRecordID: game)
            #expect(names(alicesView) == ["alice": "Alice", "bob": "Bob", "carol": "Carol"])
            #expect(alicesView.participant("carol")?.email == "carol@example.com")
        }
    }

    @Test(arguments: CloudKind.available) func aUserWithoutAProfileHasNoNameAndSentNamesAreIgnored(_ kind: CloudKind) async throws {
        try await kind.run {
            try await cloud.container(user: "alice").setUserProfile(CloudUserProfile(displayName: "Alice"))
            let alice = cloud.container(user: "alice").privateDatabase
            try await alice.saveZones([zone])
            _ = try await alice.modifyRecords(saving: [CloudRecord(id: game, type: "games")], deleting: [])
            var share = CloudShare(rootRecordID: game)
            // What the owner writes into a participant's name is not what the cloud answers.
            share.participants.append(
                CloudShare.Participant(user: "bob", permission: .readOnly, displayName: "Mallory", email: "mallory@example.com"))
            let saved = try await alice.saveShare(share)
            #expect(saved.participant("bob")?.displayName == nil)
            #expect(saved.participant("bob")?.email == nil)
            #expect(saved.participant("alice")?.displayName == "Alice")
            let accepted = try await cloud.container(user: "bob").acceptShare(url: saved.url)
            #expect(accepted.participant("bob")?.displayName == nil)
            #expect(accepted.participant("alice")?.displayName == "Alice")
        }
    }

    @Test(arguments: CloudKind.available) func aUserSharingNothingWithAnotherCannotReadTheirProfile(_ kind: CloudKind) async throws {
        try await kind.run {
            try await cloud.container(user: "alice").setUserProfile(CloudUserProfile(displayName: "Alice", email: "alice@example.com"))
            let saved = try await share()
            _ = try await cloud.container(user: "bob").acceptShare(url: saved.url)
            let carol = cloud.container(user: "carol")
            // Carol's own profile is hers alone, and no share of alice's is hers to fetch.
            #expect(try await carol.userProfile() == nil)
            await #expect(throws: CloudError.unknownItem(game)) { _ = try await carol.sharedDatabase.fetchShare(rootRecordID: game) }
            await #expect(throws: CloudError.self) { _ = try await carol.privateDatabase.fetchShare(rootRecordID: game) }
            await #expect(throws: CloudError.self) { _ = try await carol.acceptShare(url: saved.url) }
            try await carol.setUserProfile(CloudUserProfile(displayName: "Carol"))
            #expect(try await cloud.container(user: "alice").userProfile()?.displayName == "Alice")
        }
    }

    @Test(arguments: CloudKind.available) func anInvalidProfileIsRefusedNamingTheFieldAndChangesNothing(_ kind: CloudKind) async throws {
        try await kind.run {
            let alice = cloud.container(user: "alice")
            try await alice.setUserProfile(CloudUserProfile(displayName: "Alice"))
            let refused: [(CloudUserProfile, CloudUserProfileError)] = [
                (CloudUserProfile(displayName: ""), .displayName(.empty)),
                (CloudUserProfile(displayName: " \t\n "), .displayName(.empty)),
                (CloudUserProfile(displayName: String(repeating: "a", count: 257)), .displayName(.tooLong(257))),
                (CloudUserProfile(displayName: "Al\u{0}ice"), .displayName(.controlCharacter)),
                (CloudUserProfile(displayName: "Al\nice"), .displayName(.controlCharacter)),
                (CloudUserProfile(displayName: "Alice", email: ""), .email(.notAnAddress)),
                (CloudUserProfile(displayName: "Alice", email: "alice"), .email(.notAnAddress)),
                (CloudUserProfile(displayName: "Alice", email: "a@b@c"), .email(.notAnAddress)),
                (CloudUserProfile(displayName: "Alice", email: "@example.com"), .email(.notAnAddress)),
                (CloudUserProfile(displayName: "Alice", email: "alice@"), .email(.notAnAddress)),
                (CloudUserProfile(displayName: "Alice", email: "alice @example.com"), .email(.whitespace)),
                (CloudUserProfile(displayName: "Alice", email: "alice@exa\u{7f}mple.com"), .email(.controlCharacter)),
                (CloudUserProfile(displayName: "Alice", email: String(repeating: "a", count: 309) + "@example.com"), .email(.tooLong(321))),
            ]
            for (profile, error) in refused {
                await #expect(throws: error, "\(profile.displayName.prefix(20)) \(profile.email?.prefix(20) ?? "")") {
                    try await alice.setUserProfile(profile)
                }
            }
            // At the bounds: 256 characters after trimming, 320 for an address.
            let longest = CloudUserProfile(
                displayName: "  " + String(repeating: "é", count: 256) + " ", email: String(repeating: "a", count: 308) + "@example.com")
            try await alice.setUserProfile(longest)
            #expect(
                try await alice.userProfile() == CloudUserProfile(displayName: String(repeating: "é", count: 256), email: longest.email))
        }
    }
}
