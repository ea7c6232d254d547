import Foundation
import StrataCloud
import Testing

/// Profiles and participants' names as values: the rules of a valid profile, and shares
/// encoded before participants had names.
@Suite(.timeLimit(.minutes(1)))
struct CloudUserProfileTests {
    @Test func aProfileIsValidatedAndTrimmed() throws {
        #expect(try CloudUserProfile(displayName: "\u{2003}Ann Lee\t").validated() == CloudUserProfile(displayName: "Ann Lee"))
        #expect(throws: CloudUserProfileError.displayName(.empty)) { try CloudUserProfile(displayName: "\u{3000}").validated() }
        #expect(throws: CloudUserProfileError.displayName(.controlCharacter)) {
            try CloudUserProfile(displayName: "Ann\u{85}Lee").validated()
        }
        #expect(throws: CloudUserProfileError.email(.whitespace)) {
            try CloudUserProfile(displayName: "Ann", email: "ann@exa\u{2009}mple.com").validated()
        }
        let error = CloudUserProfileError.email(.tooLong(321))
        #expect(error.field == "email")
        #expect(error.description == "email: 321 characters; at most 320")
        #expect(CloudUserProfileError.displayName(.empty).field == "displayName")
    }

    @Test func aShareEncodedBeforeNamesDecodesWithoutThemAndEncodesTheSame() throws {
        let old = """
            {"participants":[{"acceptance":"accepted","permission":"readWrite","role":"owner","user":"alice"},\
            {"acceptance":"pending","permission":"readOnly","role":"privateUser","user":"bob"}],"publicPermission":"none",\
            "rootRecordID":{"name":"g1","zone":{"name":"games","owner":"alice"}}}
            """
        let share = try JSONDecoder().decode(CloudShare.self, from: Data(old.utf8))
        #expect(share.participants.map(\.displayName) == [nil, nil])
        #expect(share.participants.map(\.email) == [nil, nil])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(String(decoding: try encoder.encode(share), as: UTF8.self) == old)

        var named = share
        named.participants[1].displayName = "Bob"
        named.participants[1].email = "bob@example.com"
        let decoded = try JSONDecoder().decode(CloudShare.self, from: try encoder.encode(named))
        #expect(decoded == named)
        #expect(decoded != share)
    }

    @Test func savedParticipantsDropTheNamesTheOwnerSent() {
        var share = CloudShare(rootRecordID: CloudRecordID(name: "g1", zone: CloudZoneID(name: "games", owner: "alice")))
        share.participants[0].displayName = "Not Alice"
        share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly, displayName: "Mallory", email: "m@x"))
        let saved = CloudSharingRules.savedParticipants(of: share, owner: "alice") { _ in nil }
        #expect(saved.map(\.displayName) == [nil, nil])
        #expect(saved.map(\.email) == [nil, nil])
    }
}
