import StrataCloud
import Testing

/// The sharing rules alone, on a zone described by plain values: `g` is a shared root the
/// participant may write, `r` one they may only read, `p` is under `g`, `q` under `r`, `x`
/// under no share.
@Suite(.timeLimit(.minutes(1)))
struct CloudSharingRulesTests {
    static let zone = CloudZoneID(name: "games", owner: "alice")
    static let parents: [String: String] = ["p": "g", "q": "r"]
    static let roots: Set<String> = ["g", "r"]

    static func id(_ name: String, in zone: CloudZoneID = zone) -> CloudRecordID { CloudRecordID(name: name, zone: zone) }
    static func record(_ name: String, parent: String?) -> CloudRecord {
        CloudRecord(id: id(name), type: "t", parent: parent.map { id($0) })
    }

    static func root(of name: String, parents: [String: String]) -> String? {
        CloudSharingRules.sharedRoot(of: name, in: zone, isSharedRoot: roots.contains) { parents[$0].map { id($0) } }
    }

    static func failures(saving saves: [CloudRecord] = [], deleting deletes: [String] = []) -> Set<String> {
        var after = parents
        for save in saves { after[save.id.name] = save.parent?.name }
        let existing: Set<String> = ["g", "r", "p", "q", "x"]
        return Set(
            CloudSharingRules.participantFailures(
                saving: saves, deleting: deletes.map { id($0) },
                exists: existing.contains, isSharedRoot: roots.contains,
                rootBefore: { root(of: $0, parents: parents) }, rootAfter: { root(of: $0, parents: after) },
                canWrite: { $0 == "g" }
            ).keys.map(\.name))
    }

    @Test func theRootIsTheFirstSharedRecordUpTheChain() {
        #expect(Self.root(of: "p", parents: Self.parents) == "g")
        #expect(Self.root(of: "g", parents: Self.parents) == "g")
        #expect(Self.root(of: "x", parents: Self.parents) == nil)
        #expect(Self.root(of: "a", parents: Self.parents.merging(["a": "b", "b": "p"]) { $1 }) == "g")
        // A cycle, and a parent in another zone, end the chain.
        #expect(Self.root(of: "a", parents: ["a": "b", "b": "a"]) == nil)
        let elsewhere = CloudSharingRules.sharedRoot(of: "a", in: Self.zone, isSharedRoot: Self.roots.contains) { _ in
            Self.id("g", in: CloudZoneID(name: "other", owner: "alice"))
        }
        #expect(elsewhere == nil)
    }

    @Test func savesStayUnderAShareTheParticipantMayWrite() {
        #expect(Self.failures(saving: [Self.record("p", parent: "g")]).isEmpty)
        #expect(Self.failures(saving: [Self.record("new", parent: "p")]).isEmpty)
        #expect(Self.failures(saving: [Self.record("g", parent: nil)]).isEmpty)
        // Out of the share, into it from outside, under a read-only share, or nowhere.
        #expect(Self.failures(saving: [Self.record("p", parent: "x")]) == ["p"])
        #expect(Self.failures(saving: [Self.record("x", parent: "g")]) == ["x"])
        #expect(Self.failures(saving: [Self.record("q", parent: "r")]) == ["q"])
        #expect(Self.failures(saving: [Self.record("new", parent: nil)]) == ["new"])
        // The request's own saves count: a new parent under the share carries its child.
        #expect(Self.failures(saving: [Self.record("a", parent: "g"), Self.record("b", parent: "a")]).isEmpty)
    }

    @Test func deletesNeedAnExistingWritableRecordThatIsNotARoot() {
        #expect(Self.failures(deleting: ["p"]).isEmpty)
        #expect(Self.failures(deleting: ["g"]) == ["g"])
        #expect(Self.failures(deleting: ["q"]) == ["q"])
        #expect(Self.failures(deleting: ["x"]) == ["x"])
        #expect(Self.failures(deleting: ["missing"]) == ["missing"])
    }

    @Test func theOwnerSavesParticipantsKeepingTheAcceptanceTheCloudKnows() {
        var share = CloudShare(rootRecordID: Self.id("g"))
        share.participants = [
            CloudShare.Participant(user: "mallory", role: .owner, permission: .readWrite, acceptance: .accepted),
            CloudShare.Participant(user: "bob", permission: .readOnly),
            CloudShare.Participant(user: "carol", permission: .readWrite),
            CloudShare.Participant(user: "alice", permission: .readOnly),
        ]
        let known: [String: CloudShare.Acceptance] = ["bob": .accepted, "carol": .removed]
        let saved = CloudSharingRules.savedParticipants(of: share, owner: "alice") { known[$0] }
        #expect(saved.map(\.user) == ["alice", "mallory", "bob", "carol"])
        #expect(saved.map(\.role) == [.owner, .privateUser, .privateUser, .privateUser])
        #expect(saved.map(\.acceptance) == [.accepted, .pending, .accepted, .pending])
        #expect(saved[0].permission == .readWrite)
    }
}
