import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

@testable import StrataSync

/// An outside tester's cases for a push that drains its short log in the transaction that
/// checks it and deletes the drained entries only in the send's clean-up (ec6afb6): sends
/// that fail, are cancelled, or whose process dies between the drain and the clean-up,
/// followed by edits of the same rows, fetches, new engines, `drainChangeLog()`; the long-log
/// mode's stretch ±1 and the drain's limit ±1 with a failing first request; counters; parents
/// deleted with their children. Every case checks that no entry was applied twice (revisions),
/// nothing was lost (a fresh device's rows), `pendingCount()` and the log's last entry.
@Suite(.timeLimit(.minutes(3)))
struct OutsideShortLogDrainTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    typealias Forward = @Sendable () async throws -> CloudModifyResult
    typealias Hook = @Sendable (_ number: Int, _ device: SyncTestDevice, _ forward: Forward) async throws -> CloudModifyResult

    /// What the phone's modify requests go through: counted, and handed to `hook` when armed.
    final class Hooks: Sendable {
        let count = Atomic<Int>(0)
        let hook = Mutex<Hook?>(nil)
        let device = Mutex<SyncTestDevice?>(nil)

        func arm(_ hook: Hook?) {
            count.store(0, ordering: .sequentiallyConsistent)
            self.hook.withLock { $0 = hook }
        }
    }

    /// An app's files in a folder of their own, and a copy of them taken at one moment: what
    /// a process killed then leaves on disk. The shared-memory index is left out, as after a
    /// crash (SQLite rebuilds it from the WAL).
    struct FilesOnDisk: Sendable {
        let directory: TemporaryDirectory
        let original: String
        let copy: String

        init() throws {
            directory = try TemporaryDirectory()
            original = directory.path("original")
            copy = directory.path("copy")
            try FileManager.default.createDirectory(atPath: original, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        }

        var appPath: String { original + "/app.sqlite" }
        var copiedAppPath: String { copy + "/app.sqlite" }

        /// Copies the files as they are now; returns their names. It blocks: call it off the
        /// cooperative pool (``copyAside()``).
        func copyNow() throws -> [String] {
            let names = try FileManager.default.contentsOfDirectory(atPath: original).filter { !$0.hasSuffix("-shm") }
            for name in names { try FileManager.default.copyItem(atPath: original + "/" + name, toPath: copy + "/" + name) }
            return names
        }

        /// ``copyNow()`` on a thread of its own.
        func copyAside() async throws -> [String] {
            let files = self
            return try await runOnBackgroundThread { try files.copyNow() }
        }

        func remove() { directory.remove() }
    }

    static func container(_ cloud: MockCloud, _ hooks: Hooks) -> InterceptingContainer {
        InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            let number = hooks.count.add(1, ordering: .sequentiallyConsistent).newValue
            let forward: Forward = { try await next.modifyRecords(saving: saving, deleting: deleting) }
            guard let hook = hooks.hook.withLock({ $0 }), let device = hooks.device.withLock({ $0 }) else { return try await forward() }
            return try await hook(number, device, forward)
        }
    }

    /// A phone whose requests pass through `hooks`, its zone made by a first (empty) send.
    static func phone(
        _ cloud: MockCloud, _ hooks: Hooks, batchSize: Int = 400, database: DatabaseQueue? = nil, schema: String = SyncTestDevice.schemaSQL,
        mergePolicies: [MergePolicy] = [], time: ManualWallClock = ManualWallClock()
    ) async throws -> SyncTestDevice {
        let phone = try await SyncTestDevice(
            "phone", container: container(cloud, hooks), time: time, schema: schema, batchSize: batchSize, database: database,
            encryption: .disabled, mergePolicies: mergePolicies)
        hooks.device.withLock { $0 = phone }
        return phone
    }

    /// Statements run as the app runs them, in one transaction, detached from the engine's
    /// task (whose writes triggers skip).
    static func writeAsTheApp(_ device: SyncTestDevice, _ statements: String...) async throws {
        device.time?.advance()
        try await Task.detached {
            try await device.database.write { db in
                for statement in statements { try db.execute(sql: statement) }
            }
        }.value
    }

    /// A phone over `files` whose zone exists, with two games and `players` written as the app
    /// writes them, not sent yet.
    static func phoneOnDisk(_ files: FilesOnDisk, _ cloud: MockCloud, _ hooks: Hooks, players: String) async throws -> SyncTestDevice {
        let phone = try await Self.phone(cloud, hooks, database: DatabaseQueue(path: files.appPath))
        try await phone.engine.sendChanges()
        try await Self.writeAsTheApp(
            phone, "INSERT INTO games (id, title, score) VALUES ('g1', 'A', 1), ('g2', 'B', 2)", "INSERT INTO players VALUES \(players)")
        return phone
    }

    static func logEntries(_ device: SyncTestDevice) async throws -> Int {
        try await device.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM main.\(ChangeLog.tableName)") ?? 0 }
    }

    static func undrained(_ device: SyncTestDevice) async throws -> Int {
        try await device.database.read { db in try ChangeLogDrain.undrainedCount(in: db) }
    }

    /// The log's entries other than the one at the drain mark.
    static func entriesOffTheMark(_ device: SyncTestDevice) async throws -> Int {
        try await device.database.read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM main.\(ChangeLog.tableName) WHERE sequence <> ?",
                arguments: [ChangeLogDrain.drainedThrough(in: db)]) ?? 0
        }
    }

    /// Each record's pending revision, by record name.
    static func revisions(_ device: SyncTestDevice) async throws -> [String: Int64] {
        let rows = try await device.database.read { db in
            try String.fetchAll(
                db,
                sql:
                    "SELECT recordPrimaryKey || ':' || recordType || '=' || pendingRevision FROM \(MetadatabaseTable.metadata.qualifiedName)"
            )
        }
        var result: [String: Int64] = [:]
        for row in rows {
            let parts = row.split(separator: "=")
            result[String(parts[0])] = Int64(parts[1])
        }
        return result
    }

    static func revisionSum(_ device: SyncTestDevice) async throws -> Int64 {
        try await device.database.read { db in
            try Int64.fetchOne(db, sql: "SELECT coalesce(sum(pendingRevision), 0) FROM \(MetadatabaseTable.metadata.qualifiedName)") ?? 0
        }
    }

    /// Nothing waits, the log holds only its last drained entry, and a fresh device fetching
    /// from the cloud ends with the device's rows.
    static func expectConverged(
        _ device: SyncTestDevice, cloud: MockCloud, expectedRows: [String]? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        #expect(try await device.pending() == 0, sourceLocation: sourceLocation)
        #expect(device.engine.status.pendingCount == 0, sourceLocation: sourceLocation)
        #expect(try await Self.logEntries(device) == 1, "the log keeps only its last drained entry", sourceLocation: sourceLocation)
        #expect(try await Self.entriesOffTheMark(device) == 0, sourceLocation: sourceLocation)
        let fresh = try await SyncTestDevice("fresh-\(UUID().uuidString.prefix(8))", cloud: cloud, encryption: .disabled)
        try await fresh.engine.fetchChanges()
        let rows = try await device.rows()
        #expect(try await fresh.rows() == rows, sourceLocation: sourceLocation)
        if let expectedRows { #expect(rows == expectedRows, sourceLocation: sourceLocation) }
    }

    /// Waits until the current task is cancelled (an AsyncStream's iteration ends then).
    static func waitForCancellation() async {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        for await _ in stream {}
        continuation.finish()
    }

    // MARK: - Cancelled, failed and lost pushes followed by edits of the same rows

    enum Ending: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case cancelledBeforeTheCloud, cancelledAfterTheCloudApplied, networkFailure, lostAnswer, quotaExceeded
        var testDescription: String { rawValue }
    }

    /// A push of three rows ends at its request (cancelled before or after the cloud applied
    /// it, failed, answer lost). Its entries stay in the log, drained. The app then edits,
    /// deletes and re-inserts the same keys; a second send fails before the cloud (by the same
    /// engine or a new one over the same database): each change is drained exactly once
    /// (revisions); a third send succeeds and everything converges.
    @Test(arguments: Ending.allCases, [false, true])
    func aPushEndedAtItsRequestThenEditsOfTheSameRows(ending: Ending, newEngine: Bool) async throws {
        let cloud = MockCloud()
        let hooks = Hooks()
        let phone = try await Self.phone(cloud, hooks)
        try await phone.engine.sendChanges()
        try await Self.writeAsTheApp(
            phone, "INSERT INTO games (id, title, score) VALUES ('g1', 'A', 1), ('g2', 'B', 2)",
            "INSERT INTO players VALUES ('p1', 'g1', 'P')")
        let pendingDuringRequest = Mutex<Int?>(nil)
        let sending = Mutex<Task<Void, any Error>?>(nil)
        hooks.arm { number, device, forward in
            guard number == 1 else { return try await forward() }
            // Drained, not deleted: the entries count once, as records.
            let pending = try await device.engine.pendingCount()
            pendingDuringRequest.withLock { $0 = pending }
            switch ending {
            case .cancelledBeforeTheCloud:
                sending.withLock { $0?.cancel() }
                await Self.waitForCancellation()
                throw CancellationError()
            case .cancelledAfterTheCloudApplied:
                _ = try await forward()
                sending.withLock { $0?.cancel() }
                await Self.waitForCancellation()
                throw CancellationError()
            case .networkFailure:
                throw CloudError.networkFailure
            case .lostAnswer:
                _ = try await forward()
                throw CloudError.networkFailure
            case .quotaExceeded:
                throw CloudError.quotaExceeded
            }
        }
        let task = sending.withLock { slot in
            let task = Task { try await phone.engine.sendChanges() }
            slot = task
            return task
        }
        let result = await task.result
        switch ending {
        case .cancelledBeforeTheCloud, .cancelledAfterTheCloudApplied:
            #expect(throws: CancellationError.self) { try result.get() }
        case .networkFailure, .lostAnswer:
            #expect(throws: CloudError.networkFailure) { try result.get() }
        case .quotaExceeded:
            #expect(throws: SyncEngineError.self) { try result.get() }
            #expect(phone.engine.status.isOverQuota)
        }
        #expect(pendingDuringRequest.withLock { $0 } == 3)
        #expect(try await Self.logEntries(phone) >= 3)
        #expect(try await Self.undrained(phone) == 0)
        #expect(try await Self.revisions(phone) == ["g1:games": 1, "g2:games": 1, "p1:players": 1])
        #expect(try await phone.pending() == 3)

        // The same rows again: an edit, a delete and a re-insert of the same key, a delete.
        try await Self.writeAsTheApp(phone, "UPDATE games SET title = 'A2' WHERE id = 'g1'")
        try await Self.writeAsTheApp(phone, "DELETE FROM games WHERE id = 'g2'")
        try await Self.writeAsTheApp(phone, "INSERT INTO games (id, title, score) VALUES ('g2', 'B2', 20)")
        try await Self.writeAsTheApp(phone, "DELETE FROM players WHERE id = 'p1'")
        let sender: SyncTestDevice
        if newEngine {
            sender = try await Self.phone(cloud, hooks, database: phone.database, schema: "")
        } else {
            sender = phone
        }
        #expect(try await sender.pending() == 3)  // three records, each counted once with its entries not drained
        hooks.arm { _, _, _ in throw CloudError.serviceUnavailable(retryAfter: nil) }
        await #expect(throws: CloudError.serviceUnavailable(retryAfter: nil)) { try await sender.engine.sendChanges() }
        // Each change drained once: g1 inserted and edited, g2 inserted, deleted, inserted, p1
        // inserted and deleted.
        #expect(try await Self.revisions(sender) == ["g1:games": 2, "g2:games": 3, "p1:players": 2])
        #expect(try await sender.pending() == 3)
        hooks.arm(nil)
        try await sender.engine.sendChanges()
        try await Self.expectConverged(
            sender, cloud: cloud, expectedRows: ["game g1 'A2' 1", "game g2 'B2' 20"])
        #expect(Set(cloud.records(in: Self.zone).map(\.id.name)) == ["g1:games", "g2:games"])
    }

    // MARK: - The process dies between the drain and the clean-up

    /// The files on disk at the moment the push's request travels (a process killed then),
    /// copied aside while nothing writes; a new engine over the copy finds the entries drained
    /// and still in the log, applies none of them again, and sends what the cloud lacks (or
    /// meets its own copies, when the cloud had applied the request).
    @Test(arguments: [false, true])
    func aProcessKilledWhileThePushsRequestTravels(cloudApplied: Bool) async throws {
        let files = try FilesOnDisk()
        defer { files.remove() }
        let cloud = MockCloud()
        let hooks = Hooks()
        let phone = try await Self.phoneOnDisk(files, cloud, hooks, players: "('p1', 'g1', 'P'), ('p2', 'g2', 'Q')")
        try await Self.writeAsTheApp(phone, "UPDATE games SET score = 5 WHERE id = 'g1'")
        let copied = Mutex<[String]>([])
        hooks.arm { number, _, forward in
            guard number == 1 else { return try await forward() }
            if cloudApplied { _ = try await forward() }
            // The process dies here: what is on disk now is what the next launch finds. The
            // shared-memory index is left behind, as after a crash (the WAL is recovered).
            let names = try await files.copyAside()
            copied.withLock { $0 = names }
            throw CloudError.networkFailure
        }
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
        #expect(copied.withLock { $0 }.contains { $0.contains("metadata") }, "copied: \(copied.withLock { $0 })")
        hooks.arm(nil)
        // The next launch, over the files as they were.
        let relaunched = try await Self.phone(cloud, Hooks(), database: DatabaseQueue(path: files.copiedAppPath), schema: "")
        #expect(try await Self.logEntries(relaunched) >= 5)
        #expect(try await Self.undrained(relaunched) == 0)
        #expect(
            try await Self.revisions(relaunched) == ["g1:games": 2, "g2:games": 1, "p1:players": 1, "p2:players": 1])
        #expect(try await relaunched.pending() == 4)
        // The app goes on editing the same rows before the next send.
        try await Self.writeAsTheApp(relaunched, "UPDATE players SET name = 'P2' WHERE id = 'p1'", "DELETE FROM players WHERE id = 'p2'")
        try await relaunched.engine.sendChanges()
        try await Self.expectConverged(
            relaunched, cloud: cloud,
            expectedRows: ["game g1 'A' 5", "game g2 'B' 2", "player p1 'g1' 'P2'"])
        if !cloudApplied {
            // No conflict met: each record's revision counts its changes exactly.
            #expect(
                try await Self.revisions(relaunched) == ["g1:games": 2, "g2:games": 1, "p1:players": 2])
        }
    }

    /// Another process (a second connection with the capture functions) writes the same rows
    /// while the push's request travels; the app's process is then killed (its files copied
    /// aside as they are). The relaunched engine drains only the other process's entries and
    /// sends them; nothing is applied twice, nothing lost.
    @Test(arguments: [false, true])
    func anotherProcessWritesWhileThePushTravelsThenTheAppIsKilled(cloudApplied: Bool) async throws {
        let files = try FilesOnDisk()
        defer { files.remove() }
        let cloud = MockCloud()
        let hooks = Hooks()
        let path = files.appPath
        let phone = try await Self.phoneOnDisk(files, cloud, hooks, players: "('p1', 'g1', 'P')")
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            if db.role.canWrite { try db.addSyncCaptureFunctions() }
        }
        let extensionDatabase = try DatabasePool(path: path, configuration: configuration)
        hooks.arm { number, _, forward in
            guard number == 1 else { return try await forward() }
            if cloudApplied { _ = try await forward() }
            try await Task.detached {
                try await extensionDatabase.write { db in
                    try db.execute(
                        sql:
                            "UPDATE games SET title = 'ext' WHERE id = 'g1'; DELETE FROM games WHERE id = 'g2'; INSERT INTO games (id, title) VALUES ('g3', 'new')"
                    )
                }
            }.value
            _ = try await files.copyAside()
            throw CloudError.networkFailure
        }
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
        hooks.arm(nil)
        let relaunched = try await Self.phone(cloud, Hooks(), database: DatabaseQueue(path: files.copiedAppPath), schema: "")
        #expect(try await Self.undrained(relaunched) == 3)
        #expect(try await Self.revisions(relaunched) == ["g1:games": 1, "g2:games": 1, "p1:players": 1])
        try await relaunched.engine.sendChanges()
        try await Self.expectConverged(
            relaunched, cloud: cloud, expectedRows: ["game g1 'ext' 1", "game g3 'new' NULL", "player p1 'g1' 'P'"])
        if !cloudApplied {
            #expect(try await Self.revisions(relaunched) == ["g1:games": 2, "g3:games": 1, "p1:players": 1])
        }
    }

    /// The process dies after the push's answers were written and before its clean-up deleted
    /// the drained entries (the files copied aside when the clean-up's DELETE starts). The
    /// relaunched engine has nothing to send, counts nothing pending, and its next push sends
    /// only the edit made after the relaunch: the entries left in the log are not applied again.
    @Test func aProcessKilledBetweenTheAnswersAndTheCleanUp() async throws {
        let files = try FilesOnDisk()
        defer { files.remove() }
        let cloud = MockCloud()
        let hooks = Hooks()
        let phone = try await Self.phoneOnDisk(files, cloud, hooks, players: "('p1', 'g1', 'P')")
        let copied = Mutex<Bool>(false)
        let cleanUp = "DELETE FROM main.\(ChangeLog.tableName) WHERE sequence < ?"
        try await phone.database.write { db in
            db.addTrace { event in
                guard event.sql.contains(cleanUp), !copied.withLock({ $0 }) else { return }
                do {
                    // The trace runs on the writer's own thread, which may block.
                    _ = try files.copyNow()
                    copied.withLock { $0 = true }
                } catch {
                    Issue.record("copy failed: \(error)")
                }
            }
        }
        try await phone.engine.sendChanges()
        #expect(copied.withLock { $0 }, "the clean-up's DELETE was seen")
        #expect(cloud.records(in: Self.zone).count == 3)
        let sent = Mutex<[String]>([])
        let relaunchHooks = Hooks()
        let relaunched = try await Self.phone(cloud, relaunchHooks, database: DatabaseQueue(path: files.copiedAppPath), schema: "")
        relaunchHooks.arm { _, _, forward in
            sent.withLock { $0 += ["request"] }
            return try await forward()
        }
        #expect(try await Self.logEntries(relaunched) >= 3, "the drained entries were still in the log")
        #expect(try await Self.undrained(relaunched) == 0)
        #expect(try await relaunched.pending() == 0)
        #expect(try await relaunched.engine.hasChangesToSend() == false)
        #expect(try await Self.revisions(relaunched) == ["g1:games": 1, "g2:games": 1, "p1:players": 1])
        try await relaunched.engine.sendChanges()
        #expect(sent.withLock { $0 }.isEmpty, "nothing to send after the relaunch")
        #expect(try await Self.revisions(relaunched) == ["g1:games": 1, "g2:games": 1, "p1:players": 1])
        try await Self.writeAsTheApp(relaunched, "UPDATE games SET score = 7 WHERE id = 'g2'")
        try await relaunched.engine.sendChanges()
        #expect(sent.withLock { $0 }.count == 1)
        #expect(try await Self.revisions(relaunched) == ["g1:games": 1, "g2:games": 2, "p1:players": 1])
        try await Self.expectConverged(
            relaunched, cloud: cloud, expectedRows: ["game g1 'A' 1", "game g2 'B' 7", "player p1 'g1' 'P'"])
    }

    // MARK: - A fetch of remote edits before the retry

    /// The phone's push fails (before the cloud, or its answer lost); the tablet edits the
    /// same rows and sends; the phone fetches them, edits again, and syncs: all three devices
    /// (phone, tablet, a fresh one) end with the same rows, each column's last edit winning.
    @Test(arguments: [false, true])
    func aFetchOfRemoteEditsBeforeTheRetry(lostAnswer: Bool) async throws {
        let cloud = MockCloud()
        let hooks = Hooks()
        let time = ManualWallClock()
        let phone = try await Self.phone(cloud, hooks, time: time)
        let tablet = try await SyncTestDevice("tablet", cloud: cloud, time: time, encryption: .disabled)
        try await Self.writeAsTheApp(
            phone, "INSERT INTO games (id, title, score) VALUES ('g1', 'A', 1), ('g2', 'B', 2)",
            "INSERT INTO players VALUES ('p1', 'g1', 'P')")
        try await phone.engine.syncChanges()
        try await tablet.engine.syncChanges()
        #expect(try await tablet.rows() == phone.rows())

        try await Self.writeAsTheApp(
            phone, "UPDATE games SET title = 'phone' WHERE id = 'g1'", "UPDATE games SET score = 5 WHERE id = 'g2'")
        hooks.arm { number, _, forward in
            guard number == 1 else { return try await forward() }
            if lostAnswer { _ = try await forward() }
            throw CloudError.networkFailure
        }
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
        hooks.arm(nil)
        #expect(try await Self.undrained(phone) == 0)
        #expect(try await Self.logEntries(phone) >= 2)

        try await Self.writeAsTheApp(tablet, "UPDATE games SET score = 9 WHERE id = 'g1'", "UPDATE players SET name = 'T' WHERE id = 'p1'")
        try await tablet.engine.syncChanges()
        try await phone.engine.fetchChanges()
        // Entries drained by the failed push are still in the log: the fetch drains nothing
        // again, and the phone's own edits are still pending.
        #expect(try await Self.undrained(phone) == 0)
        // (With the answer lost, the fetch brings the phone's own copies back: equal versions,
        // nothing left to send for them.)
        if !lostAnswer { #expect(try await phone.pending() == 2) }
        try await Self.writeAsTheApp(phone, "UPDATE players SET name = 'P2' WHERE id = 'p1'")
        try await phone.engine.syncChanges()
        try await tablet.engine.syncChanges()
        try await phone.engine.syncChanges()
        let expected = ["game g1 'phone' 9", "game g2 'B' 5", "player p1 'g1' 'P2'"]
        try await Self.expectConverged(phone, cloud: cloud, expectedRows: expected)
        #expect(try await tablet.rows() == expected)
        #expect(try await tablet.pending() == 0)
    }

    // MARK: - drainChangeLog() between the failed push and the retry

    /// After a failed push, `drainChangeLog()` drains the new edit only and removes what the
    /// push drained; pendingCount() counts records, not entries; a new engine then sends.
    @Test func drainChangeLogBetweenAFailedPushAndTheRetry() async throws {
        let cloud = MockCloud()
        let hooks = Hooks()
        let phone = try await Self.phone(cloud, hooks)
        try await phone.engine.sendChanges()
        try await Self.writeAsTheApp(phone, "INSERT INTO games (id, title) VALUES ('g1', 'A'), ('g2', 'B'), ('g3', 'C')")
        cloud.failNextRequests(1, with: .networkFailure, operations: [.modifyRecords])
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
        #expect(try await Self.logEntries(phone) >= 3)
        try await Self.writeAsTheApp(phone, "UPDATE games SET title = 'A2' WHERE id = 'g1'")
        #expect(try await phone.pending() == 3)  // three records, one of them edited again in the log
        try await phone.engine.drainChangeLog()
        #expect(try await phone.pending() == 3)
        #expect(try await Self.logEntries(phone) == 1)
        #expect(try await Self.revisions(phone) == ["g1:games": 2, "g2:games": 1, "g3:games": 1])
        try await phone.engine.drainChangeLog()
        #expect(try await Self.revisions(phone) == ["g1:games": 2, "g2:games": 1, "g3:games": 1])
        let relaunched = try await Self.phone(cloud, hooks, database: phone.database, schema: "")
        try await relaunched.engine.sendChanges()
        #expect(try await Self.revisions(relaunched) == ["g1:games": 2, "g2:games": 1, "g3:games": 1])
        try await Self.expectConverged(
            relaunched, cloud: cloud, expectedRows: ["game g1 'A2' NULL", "game g2 'B' NULL", "game g3 'C' NULL"])
    }

    // MARK: - The app writes while the push's request travels

    enum Answer: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case accepted, failed, lost
        var testDescription: String { rawValue }
    }

    /// While the push's request travels (its entries drained and still in the log), the app
    /// edits a row in flight, deletes another with its child, and inserts a new one; the
    /// request is then accepted, fails, or loses its answer. pendingCount() during the request
    /// counts each record in flight once. Everything converges, and no change is drained twice.
    @Test(arguments: Answer.allCases)
    func theAppWritesWhileThePushsRequestTravels(answer: Answer) async throws {
        let cloud = MockCloud()
        let hooks = Hooks()
        let phone = try await Self.phone(cloud, hooks)
        try await phone.engine.sendChanges()
        try await Self.writeAsTheApp(
            phone, "INSERT INTO games (id, title) VALUES ('g1', 'A'), ('g2', 'B')", "INSERT INTO players VALUES ('p1', 'g2', 'P')")
        let pendingBefore = Mutex<Int?>(nil)
        let logDuring = Mutex<Int?>(nil)
        hooks.arm { number, device, forward in
            guard number == 1 else { return try await forward() }
            pendingBefore.withLock { $0 = nil }
            let pending = try await device.engine.pendingCount()
            pendingBefore.withLock { $0 = pending }
            try await Self.writeAsTheApp(
                device, "UPDATE games SET title = 'A2' WHERE id = 'g1'", "DELETE FROM games WHERE id = 'g2'",
                "INSERT INTO games (id, title) VALUES ('g3', 'C')")
            let entries = try await Self.logEntries(device)
            logDuring.withLock { $0 = entries }
            switch answer {
            case .accepted: return try await forward()
            case .failed: throw CloudError.networkFailure
            case .lost:
                _ = try await forward()
                throw CloudError.networkFailure
            }
        }
        if answer == .accepted {
            try await phone.engine.sendChanges()
        } else {
            await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
            #expect(try await Self.undrained(phone) == 4)  // the app's four entries (a cascade's delete logs too)
            hooks.arm(nil)
            try await phone.engine.sendChanges()
        }
        #expect(pendingBefore.withLock { $0 } == 3)
        // The push's three entries and the app's, all in the log during the request.
        #expect(try #require(logDuring.withLock { $0 }) >= 3 + 4)
        try await Self.expectConverged(phone, cloud: cloud, expectedRows: ["game g1 'A2' NULL", "game g3 'C' NULL"])
        #expect(Set(cloud.records(in: Self.zone).map(\.id.name)) == ["g1:games", "g3:games"])
        if answer != .lost {
            #expect(try await Self.revisions(phone)["g1:games"] == 2)
            #expect(try await Self.revisions(phone)["g3:games"] == 1)
        }
    }

    // MARK: - The long-log mode's stretch ±1, with a failing first request

    /// Logs around one stretch (600 entries at batch size 400), in transactions of 100, with
    /// and without a record named twice: up to the stretch (or with a record named twice) the
    /// push drains everything before its request; one entry more drains as it goes. The first
    /// request fails; a new engine sends the rest; every entry is drained once.
    @Test(arguments: [599, 600, 601, 602], [false, true])
    func aLogAroundOneStretchWithAFailingFirstRequest(entries: Int, namedTwice: Bool) async throws {
        let cloud = MockCloud()
        let hooks = Hooks()
        let phone = try await Self.phone(cloud, hooks, batchSize: 400)
        try await phone.engine.sendChanges()
        let inserts = namedTwice ? entries - 1 : entries
        var written = 0
        while written < inserts {
            let size = min(100, inserts - written)
            try await Self.writeAsTheApp(
                phone,
                "WITH RECURSIVE n(i) AS (SELECT \(written) UNION ALL SELECT i + 1 FROM n WHERE i < \(written + size - 1)) INSERT INTO games (id, title) SELECT 'g' || i, 'T' FROM n"
            )
            written += size
        }
        if namedTwice { try await Self.writeAsTheApp(phone, "UPDATE games SET title = 'edited' WHERE id = 'g0'") }
        #expect(try await Self.undrained(phone) == entries)
        let undrainedAtRequest = Mutex<Int?>(nil)
        hooks.arm { number, device, _ in
            if number == 1 {
                let undrained = try await Self.undrained(device)
                undrainedAtRequest.withLock { $0 = undrained }
            }
            throw CloudError.networkFailure
        }
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
        let stretch = DrainWhileSending.stretch(batchSize: 400)
        let atRequest = try #require(undrainedAtRequest.withLock { $0 })
        if entries <= stretch || namedTwice {
            #expect(atRequest == 0, "a push drains whole before its request")
        } else {
            #expect(atRequest > 0, "a long log drains as the send goes")
        }
        // Records drained and records still in the log (each entry left is a record of its own).
        let pendingAfterFailure = try await phone.pending()
        let undrainedAfterFailure = try await Self.undrained(phone)
        #expect(pendingAfterFailure == inserts, "\(pendingAfterFailure) pending, \(undrainedAfterFailure) undrained")
        let relaunched = try await Self.phone(cloud, hooks, database: phone.database, schema: "")
        hooks.arm(nil)
        try await relaunched.engine.sendChanges()
        #expect(try await Self.revisionSum(relaunched) == Int64(entries), "every entry drained once")
        #expect(cloud.records(in: Self.zone).count == inserts)
        if namedTwice {
            #expect(cloud.records(in: Self.zone).first { $0.id.name == "g0:games" }?.fields["title"] == .text("edited"))
        }
        #expect(try await relaunched.pending() == 0)
        #expect(try await Self.logEntries(relaunched) == 1)
        #expect(try await Self.entriesOffTheMark(relaunched) == 0)
    }

    // MARK: - The drain's limit ±1, failing twice

    /// A log at the drain's limit ±1 (a record named twice, so it drains whole): the first
    /// send fails at its first request, the second (a new engine) at its third, after two
    /// batches were accepted; the third sends the rest. Every entry drained once, every record
    /// in the cloud with its last values, the log down to its last entry.
    @Test(arguments: [ChangeLogDrain.batchSize - 1, ChangeLogDrain.batchSize, ChangeLogDrain.batchSize + 1])
    func aLogAtTheDrainsLimitFailingTwice(entries: Int) async throws {
        let cloud = MockCloud()
        let hooks = Hooks()
        let phone = try await Self.phone(cloud, hooks, batchSize: 400)
        try await phone.engine.sendChanges()
        try await Self.writeAsTheApp(
            phone,
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < \(entries - 2)) INSERT INTO games (id, title) SELECT 'g' || i, 'T' FROM n",
            "UPDATE games SET title = 'edited' WHERE id = 'g0'")
        #expect(try await Self.undrained(phone) == entries)
        hooks.arm { number, _, forward in
            guard number == 1 else { return try await forward() }
            throw CloudError.networkFailure
        }
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
        #expect(try await Self.undrained(phone) == 0)
        #expect(try await Self.revisionSum(phone) == Int64(entries))
        // A batch may have travelled beside the failed one, and been accepted.
        let pendingAfterFailure = try await phone.pending()
        let inCloud = cloud.records(in: Self.zone).count
        #expect(pendingAfterFailure == entries - 1 - inCloud, "\(pendingAfterFailure) pending, \(inCloud) in the cloud")
        let relaunched = try await Self.phone(cloud, hooks, database: phone.database, schema: "")
        hooks.arm { number, _, forward in
            guard number == 3 else { return try await forward() }
            throw CloudError.requestRateLimited(retryAfter: nil)
        }
        await #expect(throws: CloudError.requestRateLimited(retryAfter: nil)) { try await relaunched.engine.sendChanges() }
        #expect(try await Self.revisionSum(relaunched) == Int64(entries))
        hooks.arm(nil)
        try await relaunched.engine.sendChanges()
        #expect(try await Self.revisionSum(relaunched) == Int64(entries))
        #expect(cloud.records(in: Self.zone).count == entries - 1)
        #expect(cloud.records(in: Self.zone).first { $0.id.name == "g0:games" }?.fields["title"] == .text("edited"))
        #expect(try await relaunched.pending() == 0)
        #expect(relaunched.engine.status.pendingCount == 0)
        #expect(try await Self.logEntries(relaunched) == 1)
        #expect(try await Self.entriesOffTheMark(relaunched) == 0)
    }

    // MARK: - Counters

    /// A counter incremented on the phone, its push's answer lost (the cloud holds the
    /// increment) or its request failed; incremented again; the tablet increments too; after
    /// syncing every device, fresh one included, the counter holds every increment once.
    @Test(arguments: [false, true])
    func aCounterIncrementedAroundAFailedPush(lostAnswer: Bool) async throws {
        let cloud = MockCloud()
        let hooks = Hooks()
        let time = ManualWallClock()
        let policies: [MergePolicy] = [.counter(table: "games", column: "score")]
        let phone = try await Self.phone(cloud, hooks, mergePolicies: policies, time: time)
        let tablet = try await SyncTestDevice("tablet", cloud: cloud, time: time, encryption: .disabled, mergePolicies: policies)
        try await Self.writeAsTheApp(phone, "INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 10)")
        try await phone.engine.syncChanges()
        try await tablet.engine.syncChanges()
        try await Self.writeAsTheApp(phone, "UPDATE games SET score = score + 3 WHERE id = 'g1'")
        hooks.arm { number, _, forward in
            guard number == 1 else { return try await forward() }
            if lostAnswer { _ = try await forward() }
            throw CloudError.networkFailure
        }
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
        hooks.arm(nil)
        try await Self.writeAsTheApp(phone, "UPDATE games SET score = score + 2 WHERE id = 'g1'")
        try await Self.writeAsTheApp(tablet, "UPDATE games SET score = score + 5 WHERE id = 'g1'")
        try await tablet.engine.syncChanges()
        let relaunched = try await Self.phone(cloud, hooks, database: phone.database, schema: "", mergePolicies: policies, time: time)
        for _ in 0..<3 {
            try await relaunched.engine.syncChanges()
            try await tablet.engine.syncChanges()
        }
        let expected = ["game g1 'Poker' 20"]
        try await Self.expectConverged(relaunched, cloud: cloud, expectedRows: expected)
        #expect(try await tablet.rows() == expected)
    }

    // MARK: - A parent deleted with its children

    /// A synced game with two players is deleted (its players cascade); the push fails or
    /// loses its answer (the cloud deleted them); the app inserts the game and one player
    /// again under the same keys; the next send brings them back everywhere, the other player
    /// stays deleted.
    @Test(arguments: [false, true])
    func aParentDeletedWithItsChildrenThenInsertedAgain(lostAnswer: Bool) async throws {
        let cloud = MockCloud()
        let hooks = Hooks()
        let phone = try await Self.phone(cloud, hooks)
        try await Self.writeAsTheApp(
            phone, "INSERT INTO games (id, title) VALUES ('g1', 'A'), ('g9', 'Z')",
            "INSERT INTO players VALUES ('p1', 'g1', 'P'), ('p2', 'g1', 'Q')")
        try await phone.engine.sendChanges()
        #expect(cloud.records(in: Self.zone).count == 4)
        try await Self.writeAsTheApp(phone, "DELETE FROM games WHERE id = 'g1'")
        hooks.arm { number, _, forward in
            guard number == 1 else { return try await forward() }
            if lostAnswer { _ = try await forward() }
            throw CloudError.networkFailure
        }
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
        hooks.arm(nil)
        if lostAnswer { #expect(Set(cloud.records(in: Self.zone).map(\.id.name)) == ["g9:games"]) }
        #expect(try await phone.pending() == 3)
        try await Self.writeAsTheApp(
            phone, "INSERT INTO games (id, title) VALUES ('g1', 'again')", "INSERT INTO players VALUES ('p1', 'g1', 'back')")
        try await phone.engine.sendChanges()
        let expected = ["game g1 'again' NULL", "game g9 'Z' NULL", "player p1 'g1' 'back'"]
        try await Self.expectConverged(phone, cloud: cloud, expectedRows: expected)
        #expect(Set(cloud.records(in: Self.zone).map(\.id.name)) == ["g1:games", "g9:games", "p1:players"])
    }

    // MARK: - Cancelled pushes in a row

    /// Three pushes in a row each cancelled at their request, with an edit of the same row
    /// between each, then a send by a new engine: the record's revision counts its four
    /// changes, and the log ends with one entry.
    @Test func pushesCancelledInARowWithEditsBetween() async throws {
        let cloud = MockCloud()
        let hooks = Hooks()
        let phone = try await Self.phone(cloud, hooks)
        try await phone.engine.sendChanges()
        try await Self.writeAsTheApp(phone, "INSERT INTO games (id, title, score) VALUES ('g1', 'v0', 0)")
        let sending = Mutex<Task<Void, any Error>?>(nil)
        hooks.arm { _, _, _ in
            sending.withLock { $0?.cancel() }
            await Self.waitForCancellation()
            throw CancellationError()
        }
        for round in 1...3 {
            let task = sending.withLock { slot in
                let task = Task { try await phone.engine.sendChanges() }
                slot = task
                return task
            }
            let result = await task.result
            #expect(throws: CancellationError.self) { try result.get() }
            #expect(try await Self.revisions(phone) == ["g1:games": Int64(round)])
            #expect(try await Self.undrained(phone) == 0)
            #expect(try await phone.pending() == 1)
            try await Self.writeAsTheApp(phone, "UPDATE games SET title = 'v\(round)', score = \(round) WHERE id = 'g1'")
        }
        hooks.arm(nil)
        let relaunched = try await Self.phone(cloud, hooks, database: phone.database, schema: "")
        try await relaunched.engine.sendChanges()
        #expect(try await Self.revisions(relaunched) == ["g1:games": 4])
        try await Self.expectConverged(relaunched, cloud: cloud, expectedRows: ["game g1 'v3' 3"])
    }
}
