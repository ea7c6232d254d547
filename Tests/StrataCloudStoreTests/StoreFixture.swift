import Foundation
import Logging
import PostgresNIO
import StrataCloud
import Synchronization
import Testing

@testable import StrataCloudStore

/// The PostgreSQL server the tests use: `STRATA_TEST_POSTGRES` (a `postgres://` URL), which
/// `Tests/test-all.sh` sets after starting a throwaway cluster.
enum TestPostgres {
    static let url: URL? = ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES"].flatMap(URL.init(string:))

    static var isAvailable: Bool { url != nil }

    static func configuration() throws -> PostgresClient.Configuration {
        let url = try #require(url, "STRATA_TEST_POSTGRES is not set: run Tests/test-all.sh, or start Tests/postgres.sh")
        return PostgresClient.Configuration(
            host: url.host ?? "127.0.0.1", port: url.port ?? 5432, username: url.user ?? "postgres",
            password: url.password, database: String(url.path.dropFirst()), tls: .disable)
    }
}

/// A migrated store over a running client, for one test. Every test uses users of its own (a
/// random prefix), so tests share the database without seeing each other's data.
struct StoreFixture {
    let store: CloudStore
    let client: PostgresClient
    let prefix = "u\(UInt32.random(in: 0...UInt32.max))-"
    let logger: Logger
    private let runner: Task<Void, Never>

    init(limits: CloudLimits = CloudLimits()) async throws {
        var logger = Logger(label: "strata.cloud.store.tests")
        logger.logLevel = .warning
        self.logger = logger
        client = PostgresClient(configuration: try TestPostgres.configuration(), backgroundLogger: logger)
        let client = self.client
        runner = Task { await client.run() }
        store = CloudStore(client: client, limits: limits, logger: logger)
        try await store.migrate()
    }

    /// A user name unique to this test.
    func user(_ name: String) -> String { prefix + name }

    func database(_ name: String) -> CloudStoreDatabase { store.privateDatabase(of: user(name)) }

    func zone(_ name: String, of owner: String) -> CloudZoneID { CloudZoneID(name: name, owner: user(owner)) }

    func stop() { runner.cancel() }

    /// Alice's zone `games` holding a record `root`, shared with `participant`, who has not
    /// accepted yet.
    func aliceSharesARoot(with participant: String, permission: CloudShare.Permission = .readWrite) async throws -> CloudShare {
        let alice = database("alice")
        let zone = zone("games", of: "alice")
        try await alice.saveZones([zone])
        let root = CloudRecordID(name: "root", zone: zone)
        _ = try await alice.modifyRecords(saving: [CloudRecord(id: root, type: "games")], deleting: [])
        var share = CloudShare(rootRecordID: root, title: "games")
        share.participants.append(CloudShare.Participant(user: participant, permission: permission))
        return try await alice.saveShare(share)
    }

    /// Makes the next write to reach its commit wait there, holding its zone's lock, until
    /// the returned hold is released; later writes go through. The task running the write
    /// finishes `holding` when it ends, so that a write failing before its commit is reported
    /// rather than waited for.
    func holdNextWriteBeforeCommit() -> HeldWrite { Self.holdNextWriteBeforeCommit(of: store) }

    /// ``holdNextWriteBeforeCommit()`` for any store (one on a database of the test's own).
    static func holdNextWriteBeforeCommit(of store: CloudStore) -> HeldWrite {
        let (holds, holding) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        let held = Mutex(false)
        store.beforeModifyCommit.withLock { hook in
            hook = {
                guard
                    held.withLock({ wasHeld in
                        defer { wasHeld = true }; return !wasHeld
                    })
                else { return }
                holding.yield()
                for await _ in released { break }
            }
        }
        return HeldWrite(holds: holds, holding: holding, release: release)
    }

    /// A write held before its commit (``holdNextWriteBeforeCommit()``).
    struct HeldWrite {
        let holds: AsyncStream<Void>
        let holding: AsyncStream<Void>.Continuation
        let release: AsyncStream<Void>.Continuation

        /// Returns once the write waits before its commit: true; false when its task ended
        /// first (and finished `holding`).
        func waitUntilHeld() async -> Bool {
            for await _ in holds { return true }
            return false
        }
    }

    /// Returns once some session of the server waits for a lock: a writer queued behind
    /// another's zone lock. Polls the server's lock table, which is the event itself.
    func waitUntilSomeoneWaitsForALock() async throws {
        for _ in 0..<10_000 {
            for try await waiting in try await client.query("SELECT count(*) FROM pg_locks WHERE NOT granted").decode(Int64.self)
            where waiting > 0 {
                return
            }
            await Task.yield()
        }
        Issue.record("no session ever waited for a lock")
    }

    /// Returns once the server session `pid` waits for a lock.
    func waitUntilSessionWaitsForALock(_ pid: Int32) async throws {
        for _ in 0..<10_000 {
            for try await waiting in try await client.query("SELECT count(*) FROM pg_locks WHERE NOT granted AND pid = \(pid)").decode(
                Int64.self)
            where waiting > 0 {
                return
            }
            await Task.yield()
        }
        Issue.record("session \(pid) never waited for a lock")
    }
}
