import Foundation
import StrataCloudWire
import StrataSync

/// One script exercising every cloud operation and the failures each reports, run once against
/// MockCloud directly and once through the service, to compare what both saw.
enum CloudScript {
    static let zone = CloudZoneID(name: "games", owner: "alice")

    static func record(_ name: String, parent: String? = nil, fields: [String: CloudValue] = [:], tag: String? = nil) -> CloudRecord {
        CloudRecord(
            id: CloudRecordID(name: name, zone: zone), type: "game", fields: fields,
            fieldVersions: fields.keys.reduce(into: [:]) {
                $0[$1] = HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 2, node: "d")
            },
            parent: parent.map { CloudRecordID(name: $0, zone: zone) }, changeTag: tag)
    }

    /// A well-formed content hash named after a one-letter label (the service checks the form;
    /// MockCloud does not check the content).
    static func hash(_ label: String) -> String { String(repeating: label, count: 64) }

    static func asset(_ text: String, damaged: Bool = false) -> CloudAsset {
        let data = Data(text.utf8)
        let crc = CloudAsset.checksum(ofChunk: 0, data: data)
        return CloudAsset(
            hash: hash(text), size: Int64(data.count), chunkSize: 1 << 20,
            chunks: [CloudAsset.Chunk(data: data, encoding: 0, size: Int64(data.count), crc32: damaged ? crc ^ 1 : crc)])
    }

    /// Every field type, with values JSON finds awkward.
    static let awkwardFields: [String: CloudValue] = [
        "null": .null, "max": .integer(.max), "min": .integer(.min), "pi": .real(3.141592653589793),
        "tiny": .real(5e-324), "negativeZero": .real(-0.0), "infinity": .real(.infinity), "minusInfinity": .real(-.infinity),
        "text": .text("héllo \"quoted\" \\ / \u{1}\n emoji 🎲"), "bytes": .bytes(Data([0, 1, 2, 255, 254])),
        "asset": .asset(CloudAssetReference(hash: hash("a"), size: 1)),
    ]

    static func run(alice: any CloudContainer, bob: any CloudContainer, purge: (CloudZoneID) -> Void) async -> Transcript {
        let t = Transcript()
        let mine = alice.privateDatabase
        await t.step("account") { try await alice.accountStatus() }
        await t.step("user") { try await alice.currentUser() }
        await t.step("saveZones") { try await mine.saveZones([zone]) }
        await t.step("fetch missing") {
            FetchRecordsResponse(
                try await mine.fetchRecords([
                    CloudRecordID(name: "nope", zone: zone), CloudRecordID(name: "r", zone: CloudZoneID(name: "nowhere", owner: "alice")),
                ]))
        }
        let saved = await t.step("save") {
            ModifyRecordsResponse(
                try await mine.modifyRecords(saving: [record("g1", fields: awkwardFields), record("p1", parent: "g1")], deleting: []))
        }
        let g1Tag = saved?.saveResults.first { $0.id.name == "g1" }?.record?.changeTag
        await t.step("fetch saved") { FetchRecordsResponse(try await mine.fetchRecords([record("g1").id, record("p1").id])) }
        await t.step("stale save and its batch") {
            ModifyRecordsResponse(
                try await mine.modifyRecords(saving: [record("g1", fields: ["title": .text("x")]), record("g2")], deleting: []))
        }
        await t.step("orphan") {
            ModifyRecordsResponse(try await mine.modifyRecords(saving: [record("p2", parent: "ghost")], deleting: []))
        }
        await t.step("delete a parent") { ModifyRecordsResponse(try await mine.modifyRecords(saving: [], deleting: [record("g1").id])) }
        await t.step("delete a missing record") {
            ModifyRecordsResponse(try await mine.modifyRecords(saving: [], deleting: [record("gone").id]))
        }
        await t.step("update") {
            ModifyRecordsResponse(
                try await mine.modifyRecords(saving: [record("g1", fields: ["title": .text("Poker")], tag: g1Tag)], deleting: []))
        }
        await t.step("database changes") { DatabaseChangesResponse(try await mine.fetchDatabaseChanges(since: nil)) }
        let page = await t.step("zone changes page") { ZoneChangesResponse(try await mine.fetchZoneChanges(zone, since: nil, limit: 1)) }
        await t.step("zone changes rest") { ZoneChangesResponse(try await mine.fetchZoneChanges(zone, since: page?.token, limit: 100)) }
        let before = await t.step("zone token") { ZoneChangesResponse(try await mine.fetchZoneChanges(zone, since: nil, limit: 100)) }
        await t.step("delete child") { ModifyRecordsResponse(try await mine.modifyRecords(saving: [], deleting: [record("p1").id])) }
        await t.step("tombstone") { ZoneChangesResponse(try await mine.fetchZoneChanges(zone, since: before?.token, limit: 100)) }
        purge(zone)
        await t.step("expired token") { ZoneChangesResponse(try await mine.fetchZoneChanges(zone, since: before?.token, limit: 100)) }
        await t.step("missing zone changes") {
            ZoneChangesResponse(try await mine.fetchZoneChanges(CloudZoneID(name: "nowhere", owner: "alice"), since: nil, limit: 10))
        }
        await t.step("missing assets") { MissingAssetsResponse(missing: try await mine.missingAssets([hash("a"), hash("b")])) }
        await t.step("upload") { try await mine.uploadAssets([asset("a")]) }
        await t.step("upload damaged") { try await mine.uploadAssets([asset("b", damaged: true)]) }
        await t.step("missing after upload") { MissingAssetsResponse(missing: try await mine.missingAssets([hash("a"), hash("b")])) }
        await t.step("fetch asset") { try await mine.fetchAsset(hash("a")) }
        await t.step("fetch missing asset") { try await mine.fetchAsset(hash("b")) }

        // Sharing: only the owner shares; a read-only participant reads and cannot write.
        var share = CloudShare(rootRecordID: record("g1").id, title: "Poker night")
        share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly))
        await t.step("share by a stranger") { try await bob.privateDatabase.saveShare(share) }
        await t.step("share a missing root") { try await mine.saveShare(CloudShare(rootRecordID: record("ghost").id)) }
        await t.step("share") { try await mine.saveShare(share) }
        await t.step("fetch share before accepting") { try await bob.sharedDatabase.fetchShare(rootRecordID: share.rootRecordID) }
        await t.step("accept a bogus url") { try await bob.acceptShare(url: "strata-share://nobody/none/nothing") }
        await t.step("accept") { try await bob.acceptShare(url: share.url) }
        await t.step("shared database changes") { DatabaseChangesResponse(try await bob.sharedDatabase.fetchDatabaseChanges(since: nil)) }
        await t.step("shared zone changes") {
            ZoneChangesResponse(try await bob.sharedDatabase.fetchZoneChanges(zone, since: nil, limit: 100))
        }
        await t.step("read-only save") {
            ModifyRecordsResponse(try await bob.sharedDatabase.modifyRecords(saving: [record("p9", parent: "g1")], deleting: []))
        }
        await t.step("owner's fetch share") { try await mine.fetchShare(rootRecordID: share.rootRecordID) }
        await t.step("participant's fetch share") { try await bob.sharedDatabase.fetchShare(rootRecordID: share.rootRecordID) }
        await t.step("stranger deletes share") { try await bob.privateDatabase.deleteShare(rootRecordID: share.rootRecordID) }
        await t.step("delete share") { try await mine.deleteShare(rootRecordID: share.rootRecordID) }
        await t.step("zones of another owner") { try await mine.saveZones([CloudZoneID(name: "z", owner: "bob")]) }
        await t.step("too many items") {
            ModifyRecordsResponse(try await mine.modifyRecords(saving: (0..<5).map { record("bulk\($0)") }, deleting: []))
        }
        await t.step("too many ids") { FetchRecordsResponse(try await mine.fetchRecords((0..<5).map { record("bulk\($0)").id })) }
        await t.step("deleteZones") { try await mine.deleteZones([zone]) }
        await t.step("database changes after delete") { DatabaseChangesResponse(try await mine.fetchDatabaseChanges(since: nil)) }
        return t
    }
}
