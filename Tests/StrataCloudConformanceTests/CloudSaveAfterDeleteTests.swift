import Foundation
import StrataSync
import Testing

/// A save the cloud already applied, sent again after its answer was lost, must not bring back
/// a record another device deleted after seeing it: a tombstone keeps the field versions of
/// the record it removed, and a save carrying none newer is refused with
/// `supersededByDelete`. A save with a newer edit still wins over the delete, as before.
@Suite(.timeLimit(.minutes(5))) struct CloudSaveAfterDeleteTests {
    var cloud: TestCloud { TestCloud.current }
    let zone = CloudZoneID(name: "zone", owner: "alice")
    var database: any CloudDatabase { cloud.container(user: "alice").privateDatabase }

    static func version(_ milliseconds: Int64, counter: UInt32 = 0, node: String = "a1") -> HybridTimestamp {
        HybridTimestamp(milliseconds: milliseconds, counter: counter, node: node)
    }

    func record(
        _ name: String, fields: [String: CloudValue] = ["title": .text("t")], versions: [String: HybridTimestamp],
        parent: String? = nil, tag: String? = nil
    ) -> CloudRecord {
        CloudRecord(
            id: CloudRecordID(name: name, zone: zone), type: "games", fields: fields, fieldVersions: versions,
            parent: parent.map { CloudRecordID(name: $0, zone: zone) }, changeTag: tag)
    }

    func id(_ name: String) -> CloudRecordID { CloudRecordID(name: name, zone: zone) }

    func modify(_ saves: [CloudRecord], deleting: [String] = []) async throws -> CloudModifyResult {
        try await database.modifyRecords(saving: saves, deleting: deleting.map(id))
    }

    func outcome(_ result: CloudModifyResult, _ name: String) -> CloudError? {
        if case .failure(let error)? = result.saveResults[id(name)] { return error }
        if case .failure(let error)? = result.deleteResults[id(name)] { return error }
        return nil
    }

    func names() async throws -> [String] {
        try await cloud.records(in: zone).map(\.id.name).sorted()
    }

    /// Saves `name` with `versions`, then deletes it, as two devices would.
    @discardableResult
    func saveThenDelete(_ name: String, versions: [String: HybridTimestamp], parent: String? = nil) async throws -> CloudRecord {
        let saved = try #require(try await modify([record(name, versions: versions, parent: parent)]).saveResults[id(name)]).get()
        #expect(outcome(try await modify([], deleting: [name]), name) == nil)
        return saved
    }

    @Test(arguments: CloudKind.available) func aNewRecordSentAgainAfterItsDeleteIsRefused(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let versions = ["title": Self.version(10), "score": Self.version(11)]
            try await saveThenDelete("r", versions: versions)
            #expect(outcome(try await modify([record("r", versions: versions)]), "r") == .supersededByDelete(id("r")))
            // Older versions than the deleted record's are refused too: the delete saw newer.
            #expect(
                outcome(try await modify([record("r", versions: ["title": Self.version(9), "score": Self.version(11)])]), "r")
                    == .supersededByDelete(id("r")))
            #expect(try await names() == [])
        }
    }

    @Test(arguments: CloudKind.available) func anEditSentAgainWithItsOldTagAfterTheDeleteIsRefused(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let first = try #require(try await modify([record("r", versions: ["title": Self.version(10)])]).saveResults[id("r")]).get()
            let edit = record("r", fields: ["title": .text("edited")], versions: ["title": Self.version(20)], tag: first.changeTag)
            _ = try #require(try await modify([edit]).saveResults[id("r")]).get()
            #expect(outcome(try await modify([], deleting: ["r"]), "r") == nil)
            // The edit's answer was lost: it goes again with the tag it was built with.
            #expect(outcome(try await modify([edit]), "r") == .supersededByDelete(id("r")))
            #expect(try await names() == [])
        }
    }

    @Test(arguments: CloudKind.available) func anEditNewerThanTheDeletedRecordStillWins(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let saved = try await saveThenDelete("r", versions: ["title": Self.version(10), "score": Self.version(11)])
            // With its tag: unknown, so the device sends it again as new, which is saved.
            let newer = ["title": Self.version(10), "score": Self.version(11, counter: 1)]
            #expect(outcome(try await modify([record("r", versions: newer, tag: saved.changeTag)]), "r") == .unknownItem(id("r")))
            #expect(outcome(try await modify([record("r", versions: newer)]), "r") == nil)
            #expect(try await names() == ["r"])
        }
    }

    /// A version is compared with the same field's: a field the deleted record did not have
    /// (a column added since) is an edit the delete never saw. The node breaks a tie in time.
    @Test(arguments: CloudKind.available) func onlyTheSameFieldsVersionsAreCompared(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await saveThenDelete("r", versions: ["title": Self.version(10, node: "b")])
            #expect(
                outcome(try await modify([record("r", versions: ["title": Self.version(10, node: "a")])]), "r")
                    == .supersededByDelete(id("r")))
            #expect(outcome(try await modify([record("r", versions: ["title": Self.version(10, node: "c")])]), "r") == nil)
            try await saveThenDelete("s", versions: ["title": Self.version(10)])
            #expect(
                outcome(try await modify([record("s", versions: ["title": Self.version(10), "added": Self.version(5)])]), "s") == nil)
            #expect(try await names() == ["r", "s"])
        }
    }

    /// Without versions a save says nothing about what it carries: it is never refused so, and
    /// neither is a save over a record deleted without versions.
    @Test(arguments: CloudKind.available) func versionlessRecordsAreNeverComparedWithADelete(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await saveThenDelete("r", versions: [:])
            #expect(outcome(try await modify([record("r", versions: [:])]), "r") == nil)
            try await saveThenDelete("s", versions: ["title": Self.version(10)])
            #expect(outcome(try await modify([record("s", versions: [:])]), "s") == nil)
            try await saveThenDelete("u", versions: [:])
            #expect(outcome(try await modify([record("u", versions: ["title": Self.version(1)])]), "u") == nil)
            #expect(try await names() == ["r", "s", "u"])
        }
    }

    /// The tombstone compared is the last delete's: a record revived with newer versions and
    /// deleted again refuses what its second life held, and a revival clears the old one.
    @Test(arguments: CloudKind.available) func theLastDeleteIsTheOneCompared(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await saveThenDelete("r", versions: ["title": Self.version(10)])
            try await saveThenDelete("r", versions: ["title": Self.version(30)])
            #expect(outcome(try await modify([record("r", versions: ["title": Self.version(30)])]), "r") == .supersededByDelete(id("r")))
            #expect(outcome(try await modify([record("r", versions: ["title": Self.version(31)])]), "r") == nil)
            // Revived: the record is there again, and a save without its tag meets the live copy.
            guard case .serverRecordChanged? = outcome(try await modify([record("r", versions: ["title": Self.version(10)])]), "r")
            else {
                Issue.record("a save without a tag over the revived record was not refused as stale")
                return
            }
        }
    }

    /// The refusal is the zone's: the request's other operations fail with it and nothing is
    /// written, as for every other per-record failure.
    @Test(arguments: CloudKind.available) func theRefusalFailsTheZonesOtherOperations(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await saveThenDelete("r", versions: ["title": Self.version(10)])
            _ = try await modify([record("keep", versions: ["title": Self.version(1)])])
            let result = try await modify(
                [record("r", versions: ["title": Self.version(10)]), record("new", versions: ["title": Self.version(40)])],
                deleting: ["keep"])
            #expect(outcome(result, "r") == .supersededByDelete(id("r")))
            #expect(outcome(result, "new") == .batchRequestFailed(id("new")))
            #expect(outcome(result, "keep") == .batchRequestFailed(id("keep")))
            #expect(try await names() == ["keep"])
        }
    }

    /// A child deleted with its parent, sent again with the parent: both refused, the parent's
    /// own refusal named, so the device deletes both as the other device did.
    @Test(arguments: CloudKind.available) func aParentAndChildSentAgainAfterTheirDeleteAreRefused(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let versions = ["title": Self.version(10)]
            _ = try await modify([record("parent", versions: versions), record("child", versions: versions, parent: "parent")])
            #expect(outcome(try await modify([], deleting: ["child", "parent"]), "parent") == nil)
            let result = try await modify([record("parent", versions: versions), record("child", versions: versions, parent: "parent")])
            #expect(outcome(result, "parent") == .supersededByDelete(id("parent")))
            #expect(outcome(result, "child") == .supersededByDelete(id("child")))
            #expect(try await names() == [])
        }
    }

    /// Tombstones purged, the cloud no longer knows what the delete removed: the save is new.
    @Test(arguments: CloudKind.available) func afterTombstonesArePurgedASaveIsNew(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            try await saveThenDelete("r", versions: ["title": Self.version(10)])
            try await cloud.purgeTombstones(in: zone)
            #expect(outcome(try await modify([record("r", versions: ["title": Self.version(10)])]), "r") == nil)
            #expect(try await names() == ["r"])
        }
    }
}
