import BenchSupport
import Foundation
import Logging
import StrataSQLite
import StrataSync
import Synchronization

// The `sync-memory` workload: does the engine's memory stay bounded while it syncs a very large
// table? It uploads N rows, then applies N incoming records on a second device, for N = 100,000
// and 1,000,000 (20,000 and 200,000 with --quick), and reports each phase's peak resident
// memory above what the process held before the phase, and the peak itself (Linux VmHWM,
// reset between phases through /proc/self/clear_refs). Memory freed by one phase and reused
// by the next shows as little growth; the peak shows it too.
//
// The cloud is a `StreamingCloud`: it acknowledges saves without keeping them and generates
// the records it serves page by page, so what is measured is the engine (drain, batches,
// metadata, SQLite's caches), not a cloud that holds a million records in memory. Bounded
// means the peak at 1,000,000 rows is about the peak at 100,000: batches, not the table.
// Run: swift run -c release --package-path Benchmarks strata-bench --filter sync-memory

func runSyncMemoryWorkloadIfSelected(_ options: Options) async throws -> Bool {
    guard options.filters.contains("sync-memory") else { return false }
    try await SyncMemoryWorkload(quick: options.quick, directory: options.directory).run()
    return options.filters.allSatisfy { $0 == "sync-memory" }
}

struct SyncMemoryWorkload {
    let quick: Bool
    let directory: String?

    func run() async throws {
        let sizes = quick ? [20_000, 200_000] : [100_000, 1_000_000]
        let folder = (directory ?? NSTemporaryDirectory()) + "/strata-bench-sync-memory-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { if directory == nil { try? FileManager.default.removeItem(atPath: folder) } }
        print("")
        print("sync-memory — peak resident memory above the phase's start, while syncing N rows")
        for rows in sizes {
            let cloud = StreamingCloud(records: rows)
            let path = folder + "/memory-\(rows).sqlite"
            let pool = try DatabasePool(path: path)
            try await pool.write { db in try db.execute(sql: SyncWorkload.schema) }
            let sender = try SyncEngine(
                for: pool, tableNames: ["synced"], container: cloud,
                // The streaming cloud generates plain records and keeps no key zone: it measures
                // the engine's memory, not encryption's (strata-cloud-bench measures that).
                configuration: SyncEngineConfiguration(deviceID: "a", schedule: nil, encryption: .disabled), logger: SyncWorkload.logger,
                startImmediately: false)
            for start in stride(from: 0, to: rows, by: 50_000) {
                try await pool.write { db in
                    for index in start..<min(rows, start + 50_000) {
                        try db.execute(
                            sql: "INSERT INTO synced (id, name, score) VALUES (?, ?, ?)",
                            arguments: ["row-\(index)", "name \(index)", index])
                    }
                }
            }
            let clock = ContinuousClock()
            let (uploadGrowth, uploadPeak, uploadTime) = try await Self.measurePeak(clock) { try await sender.sendChanges() }
            guard cloud.savedCount == rows else { throw BenchFailure("the cloud acknowledged \(cloud.savedCount) saves, not \(rows)") }
            pool.close()

            let receiverPath = folder + "/memory-\(rows)-b.sqlite"
            let second = try DatabasePool(path: receiverPath)
            try await second.write { db in try db.execute(sql: SyncWorkload.schema) }
            let receiver = try SyncEngine(
                for: second, tableNames: ["synced"], container: cloud,
                configuration: SyncEngineConfiguration(deviceID: "b", fetchPageSize: 400, schedule: nil, encryption: .disabled),
                logger: SyncWorkload.logger,
                startImmediately: false)
            let (applyGrowth, applyPeak, applyTime) = try await Self.measurePeak(clock) { try await receiver.fetchChanges() }
            let count = try await second.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM synced") } ?? 0
            guard count == rows else { throw BenchFailure("the receiving device has \(count) rows, not \(rows)") }
            second.close()
            for file in [path, receiverPath] {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
            }
            func megabytes(_ bytes: Int) -> String { String(format: "%7.1f MB", Double(bytes) / 1_048_576) }
            print(
                String(
                    format: "  %9d rows   upload +%@ (peak %@, %6.1f s)   apply +%@ (peak %@, %6.1f s)",
                    rows, megabytes(uploadGrowth) as NSString, megabytes(uploadPeak) as NSString, uploadTime,
                    megabytes(applyGrowth) as NSString, megabytes(applyPeak) as NSString, applyTime))
        }
    }

    /// Runs `body` and returns how far the process's peak resident memory rose above its
    /// resident memory at the start, that peak, and the seconds it took.
    static func measurePeak(_ clock: ContinuousClock, _ body: () async throws -> Void) async throws -> (Int, Int, Double) {
        // "5" resets VmHWM to the current resident size (Linux 4.0 and later).
        ResidentMemory.resetPeak()
        let before = ResidentMemory.bytes(field: "VmRSS:")
        let duration = try await clock.measure { try await body() }
        let peak = ResidentMemory.bytes(field: "VmHWM:")
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return (max(0, peak - before), peak, seconds)
    }
}

/// A cloud that keeps nothing: saves are acknowledged and counted, and the one zone's changes
/// are `records` generated rows served page by page (the token is the offset). It lets a
/// benchmark sync a million rows without a million records held by the cloud itself.
final class StreamingCloud: CloudContainer, CloudDatabase, Sendable {
    let records: Int
    private let saved = Atomic<Int>(0)
    private let tags = Atomic<Int>(0)
    let zone = CloudZoneID(name: SyncEngineConfiguration().zoneName, owner: "bench")

    init(records: Int) { self.records = records }

    var savedCount: Int { saved.load(ordering: .relaxed) }

    // CloudContainer
    var identifier: String { "iCloud.strata.bench-streaming" }
    func accountStatus() async throws -> CloudAccountStatus { .available }
    func currentUser() async throws -> String { "bench" }
    var privateDatabase: any CloudDatabase { self }
    var sharedDatabase: any CloudDatabase { self }
    func changeHints() -> AsyncStream<Void> { AsyncStream { $0.finish() } }
    func publishPublicKey(_ key: Data) async throws {}
    func publicKeys(of users: [String]) async throws -> [String: Data] { [:] }
    func setUserProfile(_ profile: CloudUserProfile) async throws {}
    func userProfile() async throws -> CloudUserProfile? { nil }

    // CloudDatabase
    var scope: CloudDatabaseScope { .private }
    func saveZones(_ zones: [CloudZoneID]) async throws {}
    func deleteZones(_ zones: [CloudZoneID]) async throws {}

    func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
        Dictionary(uniqueKeysWithValues: ids.map { ($0, .failure(.unknownItem($0))) })
    }

    func modifyRecords(saving: [CloudRecord], deleting: [CloudRecordID]) async throws -> CloudModifyResult {
        var result = CloudModifyResult()
        for var record in saving {
            record.changeTag = "t\(tags.add(1, ordering: .relaxed).newValue)"
            result.saveResults[record.id] = .success(record)
        }
        for id in deleting { result.deleteResults[id] = .success(()) }
        saved.add(saving.count, ordering: .relaxed)
        return result
    }

    func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
        CloudDatabaseChanges(changedZones: token == nil ? [zone] : [], deletedZones: [], token: CloudChangeToken("1"))
    }

    func fetchZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
        let start = token.flatMap { Int($0.value) } ?? 0
        let end = min(records, start + limit)
        let version = HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 0, node: "z")
        let changed = (start..<end).map { index in
            CloudRecord(
                id: CloudRecordID(name: "row-\(index):synced", zone: zone), type: "synced",
                fields: ["name": .text("name \(index)"), "score": .integer(Int64(index))],
                fieldVersions: ["name": version, "score": version], changeTag: "g\(index)")
        }
        return CloudZoneChanges(changed: changed, deleted: [], token: CloudChangeToken(String(end)), moreComing: end < records)
    }

    func missingAssets(_ hashes: [String]) async throws -> Set<String> { [] }
    func uploadAssets(_ assets: [CloudAsset]) async throws {}
    func fetchAsset(_ hash: String) async throws -> CloudAsset { throw CloudError.assetNotFound(hash) }

    // Sharing: none here.
    func saveShare(_ share: CloudShare) async throws -> CloudShare { throw CloudError.permissionFailure(share.rootRecordID) }
    func fetchShare(rootRecordID: CloudRecordID) async throws -> CloudShare { throw CloudError.unknownItem(rootRecordID) }
    func deleteShare(rootRecordID: CloudRecordID) async throws {}
    func acceptShare(url: String) async throws -> CloudShare { throw CloudError.permissionFailure(nil) }
}
