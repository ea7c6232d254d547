import StrataCloud
import Testing

@testable import StrataCloudStore

/// One zone's modify decisions on a hand-made zone shape: no PostgreSQL.
/// The zone holds `g` (a shared root, seen by bob and carol), `p` under it, `h` (a shared
/// root seen by bob only) and `x` under no share.
@Suite(.timeLimit(.minutes(1)))
struct ZoneModifyPlanTests {
    static let zone = CloudZoneID(name: "games", owner: "alice")
    static func id(_ name: String) -> CloudRecordID { CloudRecordID(name: name, zone: zone) }
    static func record(_ name: String, parent: String? = nil, tag: String? = nil, text: String = "") -> CloudRecord {
        var record = CloudRecord(id: id(name), type: "t", fields: ["f": .text(text)], parent: parent.map { id($0) })
        record.changeTag = tag
        return record
    }

    static var shape: ZoneShape {
        var shape = ZoneShape(zone: zone)
        shape.existing = [
            "g": .init(record: record("g", tag: "t1"), shareRoot: "g"),
            "p": .init(record: record("p", parent: "g", tag: "t2"), shareRoot: "g"),
            "h": .init(record: record("h", tag: "t3"), shareRoot: "h"),
            "x": .init(record: record("x", tag: "t4", text: "12345"), shareRoot: nil),
        ]
        shape.children = [(name: "p", parent: "g")]
        shape.sharedRoots = ["g", "h"]
        shape.audiences = ["g": ["bob", "carol"], "h": ["bob"]]
        shape.writableRoots = ["g"]
        return shape
    }

    static func plan(
        saving saves: [CloudRecord] = [], deleting deletes: [String] = [], shared: Bool = false
    ) -> Result<ZoneModifyPlan, ZoneModifyPlan.Refusal> {
        ZoneModifyPlan.make(saving: saves, deleting: deletes.map { id($0) }, in: zone, shape: shape, shared: shared)
    }

    @Test func deletesLeaveTombstonesForTheirAudienceAndEndSharedRoots() throws {
        let plan = try Self.plan(deleting: ["x", "missing"]).get()
        #expect(plan.deletions == [.init(id: Self.id("x"), type: "t", audience: [], endsShare: false)])
        #expect(plan.growth == -Int64(Self.record("x", tag: "t4", text: "12345").encodedSize))
        let root = try Self.plan(deleting: ["p", "g"]).get()
        #expect(root.deletions.map(\.id.name) == ["p", "g"])
        #expect(root.deletions.map(\.audience) == [["bob", "carol"], ["bob", "carol"]])
        #expect(root.deletions.map(\.endsShare) == [false, true])
        #expect(root.endedShareAudience == ["bob", "carol"])
    }

    /// A save of a deleted name carrying nothing newer than its tombstone kept is refused, and
    /// the zone's other operations with it; a newer version of any field is saved as new.
    @Test func aSaveItsTombstoneAlreadyHeldIsRefused() throws {
        var shape = Self.shape
        let version = HybridTimestamp(milliseconds: 10, counter: 0, node: "a")
        shape.deleted = ["gone": ["f": version, "g": version]]
        var again = Self.record("gone")
        again.fieldVersions = ["f": version]
        let refused = ZoneModifyPlan.make(saving: [again, Self.record("y")], deleting: [], in: Self.zone, shape: shape, shared: false)
        guard case .failure(let refusal) = refused else {
            Issue.record("a save its tombstone already held was planned")
            return
        }
        #expect(refusal.error(for: Self.id("gone")) == .supersededByDelete(Self.id("gone")))
        #expect(refusal.error(for: Self.id("y")) == .batchRequestFailed(Self.id("y")))
        var newer = again
        newer.fieldVersions["g"] = HybridTimestamp(milliseconds: 10, counter: 1, node: "a")
        let plan = try ZoneModifyPlan.make(saving: [newer], deleting: [], in: Self.zone, shape: shape, shared: false).get()
        #expect(plan.writes.map(\.record.id.name) == ["gone"])
    }

    @Test func savesGetTheirRootAndParentsThatGainAChildAreTouched() throws {
        let plan = try Self.plan(saving: [Self.record("c", parent: "p"), Self.record("d", parent: "x")]).get()
        #expect(plan.writes.map(\.shareRoot) == ["g", nil])
        #expect(plan.touchedParents == ["p", "x"])
        #expect(plan.moves.isEmpty)
        // A parent saved in the same request gets its new tag from its own save.
        let withParent = try Self.plan(saving: [Self.record("c", parent: "p"), Self.record("p", tag: "t2"), Self.record("d", parent: "x")])
            .get()
        #expect(withParent.touchedParents == ["x"])
    }

    @Test func aMoveBetweenSharesTellsWhoSeesItLeave() throws {
        let plan = try Self.plan(saving: [Self.record("p", parent: "h", tag: "t2")]).get()
        #expect(plan.moves == [.init(name: "p", rootAfter: "h", leaving: ["carol"])])
        let out = try Self.plan(saving: [Self.record("p", parent: "x", tag: "t2")]).get()
        #expect(out.moves == [.init(name: "p", rootAfter: nil, leaving: ["bob", "carol"])])
        // Same parent: no move, even with other edits.
        #expect(try Self.plan(saving: [Self.record("p", parent: "g", tag: "t2", text: "new")]).get().moves.isEmpty)
    }

    @Test func refusalsFailTheWholeRequest() {
        // A stale change tag: the record's own error, the others batchRequestFailed.
        guard case .failure(let stale) = Self.plan(saving: [Self.record("x", tag: "old"), Self.record("new")]) else {
            Issue.record("a stale tag was accepted")
            return
        }
        #expect(stale.error(for: Self.id("new")) == .batchRequestFailed(Self.id("new")))
        if case .serverRecordChanged = stale.error(for: Self.id("x")) {} else { Issue.record("\(stale)") }
        // A participant may not write under a read-only share, nor delete a root.
        guard case .failure(let participant) = Self.plan(saving: [Self.record("c", parent: "h")], deleting: ["g"], shared: true) else {
            Issue.record("a participant's forbidden request was accepted")
            return
        }
        #expect(participant.failures[Self.id("c")] == .permissionFailure(Self.id("c")))
        #expect(participant.failures[Self.id("g")] == .permissionFailure(Self.id("g")))
        // The owner may.
        #expect((try? Self.plan(saving: [Self.record("c", parent: "h")], deleting: ["g"]).get()) == nil)  // g has a child
        #expect((try? Self.plan(saving: [Self.record("c", parent: "h")], deleting: ["x"]).get()) != nil)
    }
}
