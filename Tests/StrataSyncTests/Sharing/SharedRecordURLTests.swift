import StrataSync
import Testing

/// A shared record's URL says what the invitation grants, and another user's engine accepts it.
@Suite(.timeLimit(.minutes(1))) struct SharedRecordURLTests {
    let root = CloudRecordID(name: "g1:games", zone: CloudZoneID(name: "strata.default", owner: "alice"))

    @Test func theURLInvitesWithTheLastInvitedParticipantsPermission() {
        var share = CloudShare(rootRecordID: root)
        share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
        share.participants.append(CloudShare.Participant(user: "carol", permission: .readOnly))
        let shared = SharedRecord(share: share, linkKey: "1.secret")
        #expect(shared.invitedPermission == .readOnly)
        #expect(shared.url == "strata-share://alice/strata.default/g1:games?permission=readOnly#k=1.secret")
        #expect(shared.url(inviting: .readWrite) == "strata-share://alice/strata.default/g1:games?permission=readWrite#k=1.secret")
        #expect(CloudShare.invitation(fromURL: shared.url)?.permission == .readOnly)
    }

    @Test func aRemovedParticipantIsNotTheInvitationAndAPublicShareInvitesWithItsPermission() {
        var share = CloudShare(rootRecordID: root)
        share.publicPermission = .readWrite
        #expect(SharedRecord(share: share).invitedPermission == .readWrite)
        share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly, acceptance: .removed))
        #expect(SharedRecord(share: share).invitedPermission == .readWrite)
        #expect(SharedRecord(share: share).url == "strata-share://alice/strata.default/g1:games?permission=readWrite")
    }
}
