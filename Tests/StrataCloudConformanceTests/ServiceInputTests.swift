import Crypto
import Foundation
import StrataAssets
import StrataCloudClient
import StrataCloudService
import StrataSQLite
import Testing

@testable import StrataSync

/// Request fields at their extremes, through HTTP to the service over PostgreSQL: every bad
/// value gets a permanent, typed answer naming the field; nothing traps and nothing is "retry
/// later". Regression tests of issue #25 (findings 1 and 5).
@Suite(.enabled(if: CloudKind.postgresURL != nil, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct ServiceInputTests {
    let zone = CloudZoneID(name: "games", owner: "alice")

    /// The field an `invalidRequest` answer named, or nil for any other outcome.
    static func refusedField(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch CloudServiceClientError.invalidRequest(let field, _) {
            return field
        } catch {
            Issue.record("expected invalidRequest, got \(error)")
            return nil
        }
    }

    /// Limits below 1 are refused; `Int.max` and other limits over the maximum get a page of
    /// the maximum (``ServicePageSizeTests``), without trapping on the arithmetic.
    @Test func aFetchLimitOfInt64MaxIsBoundedAndTheServiceLivesOn() async throws {
        try await LiveService.with { live in
            let alice = live.container(user: "alice").privateDatabase
            try await alice.saveZones([zone])
            for limit in [Int.min, 0, -1] {
                #expect(await Self.refusedField { _ = try await alice.fetchZoneChanges(zone, since: nil, limit: limit) } == "limit")
            }
            for limit in [Int.max, 1_001, 1_000] {
                #expect(try await alice.fetchZoneChanges(zone, since: nil, limit: limit).changed.isEmpty)
            }
        }
    }

    /// Planned starts (issue #27): a number below 0 is refused naming `plannedPages`, in a
    /// zone's fetch and in a first page asked for beside a database's changes; `Int.max` and
    /// other numbers over the maximum plan the maximum.
    @Test func plannedPagesBelowZeroAreRefusedAndLargeOnesBounded() async throws {
        try await LiveService.with { live in
            let alice = live.container(user: "alice").privateDatabase
            try await alice.saveZones([zone])
            let records = (0..<12).map { CloudRecord(id: CloudRecordID(name: "g\($0)", zone: zone), type: "games") }
            _ = try await alice.modifyRecords(saving: records, deleting: [])
            for planned in [Int.min, -1] {
                #expect(
                    await Self.refusedField {
                        _ = try await alice.fetchArrivingZoneChanges(zone, since: nil, limit: 2, plannedPages: planned)
                    } == "plannedPages")
                let first = CloudZonePageRequest(zone: zone, since: nil, limit: 2, plannedPages: planned)
                #expect(
                    await Self.refusedField { _ = try await alice.fetchDatabaseChanges(since: nil, firstPages: [first]) }
                        == "firstPages[0].plannedPages")
            }
            for planned in [Int.max, CloudZonePageRequest.maximumPlannedPages + 1, CloudZonePageRequest.maximumPlannedPages] {
                let page = try await alice.fetchArrivingZoneChanges(zone, since: nil, limit: 2, plannedPages: planned)
                #expect(page.followingTokens.count == CloudZonePageRequest.maximumPlannedPages)
                let first = CloudZonePageRequest(zone: zone, since: nil, limit: 2, plannedPages: planned)
                let changes = try await alice.fetchDatabaseChanges(since: nil, firstPages: [first])
                #expect(changes.firstPages[zone]?.followingTokens.count == CloudZonePageRequest.maximumPlannedPages)
            }
            #expect(try await alice.fetchArrivingZoneChanges(zone, since: nil, limit: 2, plannedPages: 0).followingTokens.isEmpty)
        }
    }

    @Test func aStoreAskedForAHugePageReturnsABoundedOne() async throws {
        try await LiveService.with { live in
            let alice = live.store.privateDatabase(of: "alice")
            try await alice.saveZones([zone])
            _ = try await alice.modifyRecords(saving: [CloudRecord(id: CloudRecordID(name: "g", zone: zone), type: "games")], deleting: [])
            #expect(try await alice.fetchZoneChanges(zone, since: nil, limit: .max).changed.count == 1)
        }
    }

    @Test func badNamesAndValuesArePermanentErrorsNamingTheField() async throws {
        try await LiveService.with { live in
            let alice = live.container(user: "alice").privateDatabase
            try await alice.saveZones([zone])
            func save(_ record: CloudRecord) async -> String? {
                await Self.refusedField { _ = try await alice.modifyRecords(saving: [record], deleting: []) }
            }
            let long = String(repeating: "é", count: 1_500)
            #expect(await save(CloudRecord(id: CloudRecordID(name: "a\u{0}b", zone: zone), type: "games")) == "saving[0].id.name")
            #expect(await save(CloudRecord(id: CloudRecordID(name: long, zone: zone), type: "games")) == "saving[0].id.name")
            #expect(
                await save(CloudRecord(id: CloudRecordID(name: "g", zone: zone), type: "games", fields: ["title": .text("x\u{0}")]))
                    == "saving[0].fields.title")
            #expect(
                await save(CloudRecord(id: CloudRecordID(name: "g", zone: zone), type: "games", fields: ["ti\u{0}tle": .integer(1)]))
                    == "saving[0].fields")
            #expect(await save(CloudRecord(id: CloudRecordID(name: "g", zone: zone), type: long)) == "saving[0].type")
            #expect(await Self.refusedField { try await alice.saveZones([CloudZoneID(name: "z\u{0}", owner: "alice")]) } == "zones[0].name")

            // A user id of 10 KB of non-ASCII text, straight from a validly signed token.
            let stranger = String(repeating: "ü", count: 5_000)
            #expect(
                await Self.refusedField {
                    try await live.container(user: stranger).privateDatabase.saveZones([CloudZoneID(name: "z", owner: stranger)])
                } == "token.sub")
        }
    }

    @Test func nonFiniteRealsAreStoredAndReturned() async throws {
        try await LiveService.with { live in
            let alice = live.container(user: "alice").privateDatabase
            try await alice.saveZones([zone])
            let id = CloudRecordID(name: "g", zone: zone)
            let fields: [String: CloudValue] = ["nan": .real(.nan), "up": .real(.infinity), "down": .real(-.infinity), "zero": .real(-0.0)]
            let saved = try await alice.modifyRecords(saving: [CloudRecord(id: id, type: "games", fields: fields)], deleting: [])
            _ = try saved.saveResults[id]?.get()
            let fetched = try #require(try await alice.fetchRecords([id])[id]?.get())
            guard case .real(let nan)? = fetched.fields["nan"] else {
                Issue.record("nan is \(String(describing: fetched.fields["nan"]))"); return
            }
            #expect(nan.isNaN)
            #expect(fetched.fields["up"] == .real(.infinity))
            #expect(fetched.fields["down"] == .real(-.infinity))
            #expect(try await alice.fetchZoneChanges(zone, since: nil, limit: 10).changed.first?.fields["up"] == .real(.infinity))
        }
    }
}

/// Assets through HTTP: content must match its hash, and counts against the quota (findings
/// 3 and 4).
@Suite(.enabled(if: CloudKind.postgresURL != nil, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct ServiceAssetTests {
    /// An asset stored as is, in chunks of `chunkSize`.
    static func asset(_ content: Data, chunkSize: Int = 64 * 1024, hash: String? = nil) -> CloudAsset {
        var chunks: [CloudAsset.Chunk] = []
        var offset = 0
        while offset < content.count {
            let data = content.subdata(in: offset..<min(offset + chunkSize, content.count))
            chunks.append(
                CloudAsset.Chunk(
                    data: data, encoding: 0, size: Int64(data.count), crc32: CloudAsset.checksum(ofChunk: chunks.count, data: data)))
            offset += chunkSize
        }
        let digest = SHA256.hash(data: content).map { String(format: "%02x", $0) }.joined()
        return CloudAsset(hash: hash ?? digest, size: Int64(content.count), chunkSize: Int64(chunkSize), chunks: chunks)
    }

    static func random(_ count: Int) -> Data {
        Data((0..<count).map { _ in UInt8.random(in: 0...255) })
    }

    @Test func anUploadUnderAnotherContentsHashIsRefused() async throws {
        try await LiveService.with { live in
            let genuine = Self.random(1_000)
            let forged = Self.asset(Self.random(1_000), hash: Self.asset(genuine).hash)
            let mallory = live.container(user: "mallory").privateDatabase
            let error = await #expect(throws: CloudError.self) { try await mallory.uploadAssets([forged]) }
            guard case .invalidAsset(let hash, _)? = error else {
                Issue.record("expected invalidAsset, got \(String(describing: error))")
                return
            }
            #expect(hash == forged.hash)
            // Nothing was stored under the hash: the genuine content still uploads and reads back.
            let alice = live.container(user: "alice").privateDatabase
            #expect(try await alice.missingAssets([forged.hash]) == [forged.hash])
            try await alice.uploadAssets([Self.asset(genuine)])
            #expect(try await alice.fetchAsset(forged.hash).chunks.map(\.data).reduce(Data(), +) == genuine)
        }
    }

    /// What a device really sends: chunks deflated by StrataAssets, checked by inflating them.
    @Test func aCompressedAssetFromStrataAssetsIsCheckedAndReadsBack() async throws {
        let queue = try DatabaseQueue()
        let assets = try AssetStore(queue, options: AssetStorageOptions(chunkSize: 64 * 1024))
        let content = Data(String(repeating: "Strata syncs compressed assets, chunk by chunk. ", count: 12_000).utf8)
        let descriptor = try await assets.put(content)
        let stored = try #require(try await queue.read { db in try db.storedAsset(descriptor.id) })
        let asset = CloudAsset(stored)
        #expect(asset.chunks.count > 1 && asset.chunks.allSatisfy { $0.encoding == 1 })
        try await LiveService.with { live in
            let alice = live.container(user: "alice").privateDatabase
            try await alice.uploadAssets([asset])
            #expect(try await alice.fetchAsset(asset.hash) == asset)
            // The same deflated chunks under another content's name are refused.
            var forged = asset
            forged.hash = Self.asset(Self.random(100)).hash
            await #expect(throws: CloudError.self) { try await alice.uploadAssets([forged]) }
            #expect(try await alice.missingAssets([forged.hash]) == [forged.hash])
        }
    }

    @Test func assetBytesCountAgainstTheQuota() async throws {
        try await LiveService.with(limits: CloudLimits(maximumBytesPerUser: 100_000)) { live in
            let alice = live.container(user: "alice").privateDatabase
            for _ in 0..<3 { try await alice.uploadAssets([Self.asset(Self.random(30_000))]) }
            await #expect(throws: CloudError.quotaExceeded) {
                try await alice.uploadAssets([Self.asset(Self.random(30_000))])
            }
        }
    }

    @Test func aDeclaredSizeTheChunksDoNotHoldIsRefusedNamingTheField() async throws {
        try await LiveService.with { live in
            var asset = Self.asset(Self.random(10))
            asset.size = .max
            #expect(
                await ServiceInputTests.refusedField { try await live.container(user: "alice").privateDatabase.uploadAssets([asset]) }
                    == "assets[0].size")
        }
    }
}

/// Caps on the work one request may ask for (finding 6): over a cap is `limitExceeded`, which
/// a client answers by splitting.
@Suite(.enabled(if: CloudKind.postgresURL != nil, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct ServiceCapTests {
    @Test func zonesParticipantsAndHashesPerRequestAreCapped() async throws {
        try await LiveService.with(configure: { configuration in
            configuration.maximumZonesPerRequest = 3
            configuration.maximumParticipantsPerShare = 2
            configuration.maximumHashesPerRequest = 3
        }) { live in
            let alice = live.container(user: "alice").privateDatabase
            let zones = (0..<4).map { CloudZoneID(name: "z\($0)", owner: "alice") }
            await #expect(throws: CloudError.limitExceeded) { try await alice.saveZones(zones) }
            try await alice.saveZones(Array(zones.prefix(3)))
            let hashes = (0..<4).map { _ in ServiceAssetTests.asset(ServiceAssetTests.random(8)).hash }
            await #expect(throws: CloudError.limitExceeded) { _ = try await alice.missingAssets(hashes) }
            #expect(try await alice.missingAssets(Array(hashes.prefix(3))).count == 3)

            let root = CloudRecordID(name: "g", zone: zones[0])
            _ = try await alice.modifyRecords(saving: [CloudRecord(id: root, type: "games")], deleting: [])
            var share = CloudShare(rootRecordID: root)
            share.participants += ["bob", "carol"].map { CloudShare.Participant(user: $0, permission: .readOnly) }
            await #expect(throws: CloudError.limitExceeded) { _ = try await alice.saveShare(share) }
        }
    }
}
