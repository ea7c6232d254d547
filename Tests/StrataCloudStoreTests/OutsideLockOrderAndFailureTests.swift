import Foundation
import Logging
import PostgresNIO
import StrataCloud
import Synchronization
import Testing

@testable import StrataCloudStore

/// An outside tester's attack on two promises, written from the documentation only:
///
/// 1. Requests lock several rows in one order (zones by the bytes of owner then name, then the
///    owner's user row, then the zones' shares and participants), so two requests never
///    deadlock each other.
/// 2. A statement that fails while it runs (`pg_cancel_backend`, `statement_timeout`,
///    `lock_timeout`, a deadlock) fails its request with `serviceUnavailable`, never a silent
///    success and never a non-transient error; nothing reported done is missing, and a retry
///    succeeds.
///
/// Interleavings are staged by sessions of the test's own holding rows, and by watching
/// `pg_locks` for the request queued behind them. Serialized: the grid is large and the
/// machine small.
@Suite(.serialized, .enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct OutsideLockOrderAndFailureTests {

    // MARK: - The requests under attack, and a world for them

    enum Request: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The owner brings back a deleted zone.
        case saveZones
        case deleteZones
        /// The owner adds carol to the share.
        case saveShare
        /// The owner ends the share.
        case deleteShare
        /// Bob, a participant who accepted, leaves the share (`deleteShare` through the shared
        /// database).
        case leaveShare
        /// Bob, invited, accepts.
        case acceptShare
        /// The owner saves a new record under the shared root.
        case modifySave
        /// Bob saves a record under the shared root through the shared database.
        case participantSave
        /// The owner deletes the shared root (and its child): the share ends.
        case modifyDeleteRoot
        /// The owner uploads an asset.
        case uploadAsset

        var testDescription: String { rawValue }
    }

    /// Where the request is made to wait: a row a session of the test holds.
    enum WaitPoint: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// The zone's row, `FOR UPDATE` (the deleted zone's, for `saveZones`).
        case zoneRow
        /// The owner's user row, `FOR SHARE`: its updates (database feed, stored bytes) wait.
        case ownerRow
        /// The share's row, `FOR UPDATE`.
        case shareRow
        /// Bob's participant row, `FOR UPDATE`.
        case participantRow

        var testDescription: String { rawValue }
    }

    /// How the waiting statement fails.
    enum Failure: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// `pg_cancel_backend` of the waiting session (57014).
        case cancel
        /// The request's session has `lock_timeout` (55P03).
        case lockTimeout
        /// The request's session has `statement_timeout` (57014).
        case statementTimeout
        /// The holding session then asks for a row the request already holds: a deadlock
        /// (40P01) that PostgreSQL breaks by failing the request, which waited first.
        case deadlock

        var testDescription: String { rawValue }
    }

    /// Where each request really waits (checked against the SQL it runs).
    static let waits: [(Request, WaitPoint)] = [
        (.saveZones, .zoneRow), (.deleteZones, .zoneRow), (.saveShare, .zoneRow), (.deleteShare, .zoneRow),
        (.leaveShare, .zoneRow), (.acceptShare, .zoneRow), (.modifySave, .zoneRow), (.participantSave, .zoneRow),
        (.modifyDeleteRoot, .zoneRow),
        (.saveZones, .ownerRow), (.deleteZones, .ownerRow), (.saveShare, .ownerRow), (.deleteShare, .ownerRow),
        (.modifySave, .ownerRow), (.participantSave, .ownerRow), (.modifyDeleteRoot, .ownerRow), (.uploadAsset, .ownerRow),
        (.saveShare, .shareRow), (.deleteShare, .shareRow), (.leaveShare, .shareRow), (.acceptShare, .shareRow),
        (.modifyDeleteRoot, .shareRow), (.deleteZones, .shareRow),
        (.saveShare, .participantRow), (.deleteShare, .participantRow), (.leaveShare, .participantRow),
        (.acceptShare, .participantRow), (.modifyDeleteRoot, .participantRow), (.deleteZones, .participantRow),
    ]

    struct World: Sendable {
        var alice: String
        var bob: String
        var carol: String
        var zone: CloudZoneID
        var gone: CloudZoneID
        var root: CloudRecordID
        var child: CloudRecordID
        var share: CloudShare
        var asset: CloudAsset

        /// alice's zone `games` with a shared root and its child, the share with bob (readWrite),
        /// accepted unless `bobAccepts` is false, and a deleted zone `gone`.
        static func make(in fixture: StoreFixture, bobAccepts: Bool) async throws -> World {
            let alice = fixture.database("alice")
            let (zone, gone) = (fixture.zone("games", of: "alice"), fixture.zone("gone", of: "alice"))
            try await alice.saveZones([zone, gone])
            try await alice.deleteZones([gone])
            let root = CloudRecordID(name: "root", zone: zone)
            let child = CloudRecordID(name: "child", zone: zone)
            _ = try await alice.modifyRecords(
                saving: [
                    CloudRecord(id: root, type: "games", fields: ["title": .text("chess")]),
                    CloudRecord(id: child, type: "players", fields: ["name": .text("ann")], parent: root),
                ], deleting: [])
            var share = CloudShare(rootRecordID: root, title: "games")
            share.participants.append(CloudShare.Participant(user: fixture.user("bob"), permission: .readWrite))
            share = try await alice.saveShare(share)
            if bobAccepts { _ = try await fixture.store.container(for: fixture.user("bob")).acceptShare(url: share.url) }
            return World(
                alice: fixture.user("alice"), bob: fixture.user("bob"), carol: fixture.user("carol"), zone: zone, gone: gone, root: root,
                child: child, share: share, asset: Self.sealedAsset(seed: 1))
        }

        static func sealedAsset(seed: Int) -> CloudAsset {
            let data = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ seed) })
            let chunk = CloudAsset.Chunk(
                data: data, encoding: 2, size: Int64(data.count), crc32: CloudAsset.checksum(ofChunk: 0, data: data))
            let hash = String(format: "%064x", seed)
            return CloudAsset(hash: hash, size: Int64(data.count), chunkSize: Int64(data.count), chunks: [chunk])
        }

        func send(_ request: Request, via store: CloudStore) async throws {
            let owner = store.privateDatabase(of: alice)
            switch request {
            case .saveZones: try await owner.saveZones([gone])
            case .deleteZones: try await owner.deleteZones([zone])
            case .saveShare:
                var updated = share
                updated.participants.append(CloudShare.Participant(user: carol, permission: .readOnly))
                _ = try await owner.saveShare(updated)
            case .deleteShare: try await owner.deleteShare(rootRecordID: root)
            case .leaveShare: try await store.sharedDatabase(of: bob).deleteShare(rootRecordID: root)
            case .acceptShare: _ = try await store.container(for: bob).acceptShare(url: share.url)
            case .modifySave:
                let result = try await owner.modifyRecords(
                    saving: [CloudRecord(id: CloudRecordID(name: "new", zone: zone), type: "players", parent: root)], deleting: [])
                try Self.expectAllSucceeded(result)
            case .participantSave:
                let result = try await store.sharedDatabase(of: bob).modifyRecords(
                    saving: [CloudRecord(id: CloudRecordID(name: "bobs", zone: zone), type: "players", parent: root)], deleting: [])
                try Self.expectAllSucceeded(result)
            case .modifyDeleteRoot:
                let result = try await owner.modifyRecords(saving: [], deleting: [child, root])
                try Self.expectAllSucceeded(result)
            case .uploadAsset: try await owner.uploadAssets([asset])
            }
        }

        struct PerRecordFailure: Error, CustomStringConvertible {
            var description: String
        }

        static func expectAllSucceeded(_ result: CloudModifyResult) throws {
            var failures: [String] = []
            for (id, outcome) in result.saveResults { if case .failure(let error) = outcome { failures.append("\(id): \(error)") } }
            for (id, outcome) in result.deleteResults { if case .failure(let error) = outcome { failures.append("\(id): \(error)") } }
            if !failures.isEmpty { throw PerRecordFailure(description: failures.joined(separator: "; ")) }
        }

        /// Whether `request`'s effect is in the database.
        func isDone(_ request: Request, in fixture: StoreFixture) async throws -> Bool {
            switch request {
            case .saveZones:
                return try await count(
                    "SELECT 1 FROM strata_cloud.zones WHERE owner = \(alice) AND name = \(gone.name) AND NOT deleted", fixture)
                    == 1
            case .deleteZones:
                return try await count(
                    "SELECT 1 FROM strata_cloud.zones WHERE owner = \(alice) AND name = \(zone.name) AND deleted", fixture)
                    == 1
            case .saveShare:
                return try await count(
                    "SELECT 1 FROM strata_cloud.share_participants WHERE owner = \(alice) AND zone = \(zone.name) AND participant = \(carol)",
                    fixture) == 1
            case .deleteShare, .modifyDeleteRoot:
                let shares = try await count(
                    "SELECT 1 FROM strata_cloud.shares WHERE owner = \(alice) AND zone = \(zone.name) AND root = \(root.name)", fixture)
                if request == .deleteShare { return shares == 0 }
                let roots = try await count(
                    "SELECT 1 FROM strata_cloud.records WHERE owner = \(alice) AND zone = \(zone.name) AND name = \(root.name)", fixture)
                return shares == 0 && roots == 0
            case .leaveShare, .acceptShare:
                let accepted = try await count(
                    """
                    SELECT 1 FROM strata_cloud.share_participants
                    WHERE owner = \(alice) AND zone = \(zone.name) AND participant = \(bob) AND acceptance = 'accepted'
                    """, fixture)
                return request == .acceptShare ? accepted == 1 : accepted == 0
            case .modifySave, .participantSave:
                let name = request == .modifySave ? "new" : "bobs"
                return try await count(
                    "SELECT 1 FROM strata_cloud.records WHERE owner = \(alice) AND zone = \(zone.name) AND name = \(name)", fixture) == 1
            case .uploadAsset:
                return try await count("SELECT 1 FROM strata_cloud.assets WHERE owner = \(alice) AND hash = \(asset.hash)", fixture) == 1
            }
        }

        /// The row `point` names, for `request`.
        func heldRow(_ point: WaitPoint, for request: Request) -> PostgresQuery {
            switch point {
            case .zoneRow:
                let name = request == .saveZones ? gone.name : zone.name
                return "SELECT 1 FROM strata_cloud.zones WHERE owner = \(alice) AND name = \(name) FOR UPDATE"
            case .ownerRow:
                return "SELECT 1 FROM strata_cloud.users WHERE name = \(alice) FOR SHARE"
            case .shareRow:
                return "SELECT 1 FROM strata_cloud.shares WHERE owner = \(alice) AND zone = \(zone.name) AND root = \(root.name) FOR UPDATE"
            case .participantRow:
                return """
                    SELECT 1 FROM strata_cloud.share_participants
                    WHERE owner = \(alice) AND zone = \(zone.name) AND root = \(root.name) AND participant = \(bob) FOR UPDATE
                    """
            }
        }

        /// A row `request` holds by the time it waits anywhere but its first lock: asked for
        /// by the holding session, it closes a cycle.
        func counterLock(for request: Request) -> PostgresQuery {
            switch request {
            case .saveZones: "SELECT 1 FROM strata_cloud.zones WHERE owner = \(alice) AND name = \(gone.name) FOR UPDATE"
            case .uploadAsset:
                "INSERT INTO strata_cloud.assets (owner, hash, size, chunk_size) VALUES (\(alice), \(asset.hash), 1, 1) ON CONFLICT DO NOTHING"
            default: "SELECT 1 FROM strata_cloud.zones WHERE owner = \(alice) AND name = \(zone.name) FOR UPDATE"
            }
        }
    }

    // MARK: - 1. Lock order

    /// Ten zone names whose bytes, Swift's `<` and a locale's collation all order differently
    /// (case, a combining accent against its precomposed form, a prefix, an emoji, a
    /// full-width letter), named in a scrambled order. While the request waits for the zone
    /// held at `held` (in byte order), every zone before it must be locked by the request and
    /// every zone after it free: exactly the byte order, one at a time.
    static let scrambledNames = ["😀", "a!", "e\u{301}", "Z", "\u{FF21}", "a", "\u{E9}", "B", "ab", "f"]

    @Test(arguments: [Request.saveZones, .deleteZones], [0, 4, 9])
    func zonesAreLockedInTheirBytesOrderOneAtATime(request: Request, held: Int) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zones = Self.scrambledNames.map { fixture.zone($0, of: "alice") }
        try await alice.saveZones(zones)
        let byBytes = zones.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        let holder = try await RowHolder.hold(LockProbe.zoneRow(byBytes[held]), in: fixture)
        defer { holder.release() }
        let requesting = Task {
            if request == .saveZones { try await alice.saveZones(zones) } else { try await alice.deleteZones(zones) }
        }
        try await holder.waitUntilSomeoneWaits(in: fixture)
        var lockedByRequest: [String] = []
        for zone in byBytes where zone != byBytes[held] {
            if try await !LockProbe.canLock(LockProbe.zoneRow(zone, nowait: true), in: fixture) { lockedByRequest.append(zone.name) }
        }
        holder.release()
        try await requesting.value
        #expect(
            lockedByRequest == byBytes.prefix(held).map(\.name),
            "waiting for \(byBytes[held].name.unicodeScalars.map { String($0.value, radix: 16) }), the request held \(lockedByRequest.map { $0.unicodeScalars.map { String($0.value, radix: 16) } })"
        )
    }

    /// While a request waits for the zone's row, it holds nothing that comes after it: not
    /// the share, not bob's participant row, not the owner's user row.
    @Test(arguments: Self.waits.filter { $0.1 == .zoneRow }.map(\.0))
    func whileWaitingForTheZoneARequestHoldsNothingThatComesAfterIt(request: Request) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let world = try await World.make(in: fixture, bobAccepts: request != .acceptShare)
        let holder = try await RowHolder.hold(world.heldRow(.zoneRow, for: request), in: fixture)
        defer { holder.release() }
        let requesting = Task { try await world.send(request, via: fixture.store) }
        try await holder.waitUntilSomeoneWaits(in: fixture)
        let (alice, zone, root, bob) = (world.alice, world.zone.name, world.root.name, world.bob)
        let probes: [(String, PostgresQuery)] = [
            ("share", "SELECT 1 FROM strata_cloud.shares WHERE owner = \(alice) AND zone = \(zone) AND root = \(root) FOR UPDATE NOWAIT"),
            (
                "participant",
                "SELECT 1 FROM strata_cloud.share_participants WHERE owner = \(alice) AND zone = \(zone) AND participant = \(bob) FOR UPDATE NOWAIT"
            ),
            ("owner", "SELECT 1 FROM strata_cloud.users WHERE name = \(alice) FOR NO KEY UPDATE NOWAIT"),
            ("bob", "SELECT 1 FROM strata_cloud.users WHERE name = \(bob) FOR NO KEY UPDATE NOWAIT"),
        ]
        var held: [String] = []
        for (name, probe) in probes where try await !LockProbe.canLock(probe, in: fixture) { held.append(name) }
        holder.release()
        try await requesting.value
        #expect(held.isEmpty, "\(request) held \(held) while it waited for the zone")
        #expect(try await world.isDone(request, in: fixture))
    }

    /// Two uploads by one user sharing an asset: the first has stored asset 1 and waits to
    /// count its bytes (the owner's row); the second stores asset 2 and waits there too. Let
    /// go, the first counts its bytes, then asks to store asset 2, which the second holds while
    /// it waits for the user row the first now holds: the two may not deadlock.
    @Test func twoUploadsSharingAnAssetDoNotDeadlock() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        try await alice.saveZones([fixture.zone("games", of: "alice")])
        let (one, two) = (World.sealedAsset(seed: 11), World.sealedAsset(seed: 12))
        let holder = try await RowHolder.hold(
            "SELECT 1 FROM strata_cloud.users WHERE name = \(fixture.user("alice")) FOR SHARE", in: fixture)
        defer { holder.release() }
        let first = Task { try await alice.uploadAssets([one, two]) }
        try await Self.waitUntil(blockedBehind: holder.pid, atLeast: 1, in: fixture)
        let second = Task { try await alice.uploadAssets([two]) }
        try await Self.waitUntil(blockedBehind: holder.pid, atLeast: 2, in: fixture)
        holder.release()
        try await holder.task.value
        for (name, outcome) in [("[1, 2]", await first.result), ("[2]", await second.result)] {
            if case .failure(let error) = outcome { Issue.record("the upload of \(name) failed: \(String(reflecting: error))") }
        }
        let stored = try await Self.count(
            "SELECT 1 FROM strata_cloud.assets WHERE owner = \(fixture.user("alice")) AND hash = ANY(\([one.hash, two.hash]))", fixture)
        #expect(stored == 2)
        try await Self.expectAccounting(of: fixture.user("alice"), in: fixture)
    }

    // MARK: - 2. A statement failing while it runs

    /// Every request, made to wait at each row it really waits for, and failed there in each
    /// way a statement can fail while it runs: the request fails as `serviceUnavailable` with
    /// nothing of it left, or succeeds with all of it there; sent again, it succeeds. The
    /// owner's stored bytes stay the sizes of what is stored.
    @Test(arguments: Failure.allCases, 0..<Self.waits.count)
    func aStatementFailingWhereverTheRequestWaitsFailsItAsTemporary(failure: Failure, wait: Int) async throws {
        let (request, point) = Self.waits[wait]
        // The deadlock needs a row the request holds before it waits: none before its first lock.
        if failure == .deadlock && point == .zoneRow { return }
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let world = try await World.make(in: fixture, bobAccepts: request != .acceptShare)
        let timed: TimedStore? =
            switch failure {
            case .lockTimeout: try await TimedStore(setting: "lock_timeout", fixture: fixture)
            case .statementTimeout: try await TimedStore(setting: "statement_timeout", fixture: fixture)
            // The request's sessions look for the cycle after 50 ms, not PostgreSQL's 1 s: the
            // same failure, found sooner (28 cases).
            case .deadlock: try await TimedStore(setting: "deadlock_timeout", fixture: fixture)
            default: nil
            }
        defer { timed?.stop() }
        #expect(try await !world.isDone(request, in: fixture))

        let holder = try await Session.open(in: fixture)
        defer { holder.close() }
        if failure == .deadlock {
            // The request's sessions look for a cycle 50 ms into a wait, this one 300 ms into its
            // own. Normally the cycle is there by the request's look, and the request fails. On a
            // loaded machine this session may start waiting after that look found nothing
            // (PostgreSQL looks once a wait): then this session finds the cycle and fails, and
            // the request succeeds. Either way the case ends (with 10 minutes here, it hung).
            try await holder.run("SET deadlock_timeout = '300ms'")
        }
        try await holder.run("BEGIN")
        try await holder.run(world.heldRow(point, for: request))
        let sending = Task { try await world.send(request, via: timed?.store ?? fixture.store) }
        var counter: Task<Void, any Error>?
        switch failure {
        case .cancel:
            let waiter = try #require(try await Self.waiter(behind: holder.pid, in: fixture))
            for try await _ in try await fixture.client.query("SELECT pg_cancel_backend(\(waiter))", logger: fixture.logger) {}
        case .deadlock:
            _ = try #require(try await Self.waiter(behind: holder.pid, in: fixture))
            let query = world.counterLock(for: request)
            counter = Task { try await holder.run(query) }
        case .lockTimeout, .statementTimeout:
            break
        }
        let outcome = await sending.result
        if let counter {
            // The holding session gets its row once the request's transaction ended, or fails
            // as the deadlock's victim.
            _ = await counter.result
        }
        try await holder.run("ROLLBACK")

        switch outcome {
        case .success:
            // Nothing failed (the statement was past its wait): then all of it is there.
            #expect(try await world.isDone(request, in: fixture), "\(request) reported success and its change is missing")
        case .failure(let error):
            #expect(
                (error as? CloudError)?.isTransient == true,
                "\(request) waiting at \(point), \(failure): \(String(reflecting: error).prefix(400))")
            #expect(try await !world.isDone(request, in: fixture), "\(request) failed, and its change is there")
            try await Self.expectAccounting(of: world.alice, in: fixture)
            try await world.send(request, via: fixture.store)
            #expect(try await world.isDone(request, in: fixture), "\(request) sent again did not take")
        }
        try await Self.expectAccounting(of: world.alice, in: fixture)
        try await Self.expectNoOrphans(of: world.alice, in: fixture)
    }

    /// A modify naming two zones commits one transaction per zone. The second zone's waits
    /// behind a held row and is cancelled: the request fails as temporary; the first zone's
    /// saves stayed. Sent again as a client does, nothing is lost: each save succeeds, or is
    /// answered with the server's record, which is the one sent.
    @Test func aModifyOfTwoZonesCancelledInTheSecondLosesNothingAndRetries() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        // "B" before "a" by bytes: the modify takes "B" first.
        let (first, second) = (fixture.zone("B", of: "alice"), fixture.zone("a", of: "alice"))
        try await alice.saveZones([first, second])
        let saves = [second, first].map { zone in
            CloudRecord(id: CloudRecordID(name: "r", zone: zone), type: "games", fields: ["title": .text(zone.name)])
        }
        let holder = try await RowHolder.hold(LockProbe.zoneRow(second), in: fixture)
        defer { holder.release() }
        let sending = Task { try await alice.modifyRecords(saving: saves, deleting: []) }
        let waiter = try #require(try await holder.waiter(in: fixture))
        for try await _ in try await fixture.client.query("SELECT pg_cancel_backend(\(waiter))", logger: fixture.logger) {}
        let outcome = await sending.result
        holder.release()
        try await holder.task.value
        guard case .failure(let error) = outcome else {
            Issue.record("the modify succeeded although its second zone's statement was cancelled")
            return
        }
        #expect((error as? CloudError)?.isTransient == true, "\(String(reflecting: error))")
        let retried = try await alice.modifyRecords(saving: saves, deleting: [])
        for record in saves {
            switch retried.saveResults[record.id] {
            case .success?: break
            case .failure(.serverRecordChanged(let server))?:
                #expect(server.fields == record.fields, "\(record.id): the server holds \(server.fields)")
            case let other:
                Issue.record("\(record.id) sent again: \(String(describing: other))")
            }
        }
        let fetched = try await alice.fetchRecords(saves.map(\.id))
        for record in saves {
            #expect((try? fetched[record.id]?.get())?.fields == record.fields, "\(record.id) is missing")
        }
        try await Self.expectAccounting(of: fixture.user("alice"), in: fixture)
    }

    /// A participant leaves a share the owner ends at the same time: after it (`false`), or
    /// queued behind the owner's request on the zone's row (`true`). `leave_share` answers
    /// "true when the share is gone already", and MockCloud (the reference) returns
    /// success for a share that is gone: the leave must succeed, not fail.
    @Test(arguments: [false, true])
    func leavingAShareTheOwnerEndsSucceeds(raced: Bool) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let world = try await World.make(in: fixture, bobAccepts: true)
        let owner = fixture.database("alice")
        if raced {
            let holder = try await RowHolder.hold("SELECT 1 FROM strata_cloud.users WHERE name = \(world.alice) FOR SHARE", in: fixture)
            defer { holder.release() }
            let ending = Task { try await owner.deleteShare(rootRecordID: world.root) }
            try await holder.waitUntilSomeoneWaits(in: fixture)
            let leaving = Task { try await fixture.store.sharedDatabase(of: world.bob).deleteShare(rootRecordID: world.root) }
            try await Self.waitUntil(blockedBehind: holder.pid, atLeast: 2, in: fixture)
            holder.release()
            try await holder.task.value
            try await ending.value
            let outcome = await leaving.result
            if case .failure(let error) = outcome { Issue.record("bob's leave failed: \(String(reflecting: error))") }
        } else {
            try await owner.deleteShare(rootRecordID: world.root)
            do {
                try await fixture.store.sharedDatabase(of: world.bob).deleteShare(rootRecordID: world.root)
            } catch {
                Issue.record("bob's leave failed: \(String(reflecting: error))")
            }
        }
        #expect(try await world.isDone(.deleteShare, in: fixture))
    }

    // MARK: - 3. Everything at once

    /// Eight clients (the owner, two participants) send 20 requests each, chosen by a seed,
    /// over four zones with shares, naming zones in random orders. No lock was held and no
    /// statement cancelled, so nothing may fail as temporary (a deadlock) or with anything but
    /// a cloud error; afterwards deleted zones keep nothing and the owner's bytes add up.
    @Test(arguments: [1, 2, 3])
    func manyRequestsInRandomOrdersNeverDeadlock(seed: UInt64) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let owner = fixture.database("alice")
        let (bob, carol) = (fixture.user("bob"), fixture.user("carol"))
        let zones = ["a", "B", "e\u{301}", "\u{E9}"].map { fixture.zone($0, of: "alice") }
        try await owner.saveZones(zones)
        for zone in zones {
            let root = CloudRecordID(name: "root", zone: zone)
            _ = try await owner.modifyRecords(saving: [CloudRecord(id: root, type: "games")], deleting: [])
            var share = CloudShare(rootRecordID: root, title: zone.name)
            share.participants = [bob, carol].map { CloudShare.Participant(user: $0, permission: .readWrite) }
            share = try await owner.saveShare(share)
            for user in [bob, carol] { _ = try await fixture.store.container(for: user).acceptShare(url: share.url) }
        }
        let store = fixture.store
        let unexpected = Collected()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var random = SplitMix(seed: seed &* 1000 &+ UInt64(worker))
                    for step in 0..<20 {
                        let choice = Int(random.next() % 9)
                        let shuffled = zones.shuffled(using: &random)
                        let some = Array(shuffled.prefix(1 + Int(random.next() % 3)))
                        let zone = shuffled[0]
                        let root = CloudRecordID(name: "root", zone: zone)
                        let participant = random.next() % 2 == 0 ? bob : carol
                        do {
                            switch choice {
                            case 0: try await store.privateDatabase(of: fixture.user("alice")).saveZones(some)
                            case 1: try await store.privateDatabase(of: fixture.user("alice")).deleteZones(some)
                            case 2:
                                var share = CloudShare(rootRecordID: root, title: "w\(worker)")
                                share.participants = [bob, carol].map { CloudShare.Participant(user: $0, permission: .readWrite) }
                                _ = try await store.privateDatabase(of: fixture.user("alice")).saveShare(share)
                            case 3: try await store.privateDatabase(of: fixture.user("alice")).deleteShare(rootRecordID: root)
                            case 4:
                                _ = try await store.container(for: participant).acceptShare(url: CloudShare(rootRecordID: root).url)
                            case 5: try await store.sharedDatabase(of: participant).deleteShare(rootRecordID: root)
                            case 6:
                                // The owner saves under the root of several zones, and deletes the root of one.
                                let saves = some.map { zone in
                                    CloudRecord(
                                        id: CloudRecordID(name: "o\(worker)-\(step)", zone: zone), type: "players",
                                        parent: CloudRecordID(name: "root", zone: zone))
                                }
                                _ = try await store.privateDatabase(of: fixture.user("alice")).modifyRecords(
                                    saving: saves, deleting: random.next() % 4 == 0 ? [root] : [])
                            case 7:
                                let saves = some.map { zone in
                                    CloudRecord(
                                        id: CloudRecordID(name: "p\(worker)-\(step)", zone: zone), type: "players",
                                        parent: CloudRecordID(name: "root", zone: zone))
                                }
                                _ = try await store.sharedDatabase(of: participant).modifyRecords(saving: saves, deleting: [])
                            default:
                                // The root again (it may have been deleted), so shares can come back.
                                _ = try await store.privateDatabase(of: fixture.user("alice")).modifyRecords(
                                    saving: [CloudRecord(id: root, type: "games")], deleting: [])
                            }
                        } catch let error as CloudError where !error.isTransient {
                            continue
                        } catch {
                            let text = "worker \(worker) step \(step) choice \(choice): \(String(reflecting: error).prefix(300))"
                            unexpected.list.withLock { $0.append(text) }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let failures = unexpected.list.withLock { $0 }
        #expect(failures.isEmpty, "\(failures.count) requests failed: \(failures.prefix(5))")
        try await Self.expectAccounting(of: fixture.user("alice"), in: fixture)
        try await Self.expectNoOrphans(of: fixture.user("alice"), in: fixture)
    }

    // MARK: - Helpers

    /// A store whose every session has `setting` at 50 ms: its requests' statements fail on
    /// their own while they wait.
    struct TimedStore {
        let store: CloudStore
        let client: PostgresClient
        let runner: Task<Void, Never>

        init(setting: String, fixture: StoreFixture) async throws {
            var configuration = try TestPostgres.configuration()
            configuration.options.additionalStartupParameters = [(setting, "50ms")]
            client = PostgresClient(configuration: configuration, backgroundLogger: fixture.logger)
            let client = self.client
            runner = Task { await client.run() }
            store = CloudStore(client: client, logger: fixture.logger)
        }

        func stop() { runner.cancel() }
    }

    /// A session of the test's own, running statements one at a time on one connection.
    final class Session: Sendable {
        typealias Command = (query: PostgresQuery, done: CheckedContinuation<Void, any Error>)
        let pid: Int32
        private let commands: AsyncStream<Command>.Continuation
        private let task: Task<Void, any Error>

        private init(pid: Int32, commands: AsyncStream<Command>.Continuation, task: Task<Void, any Error>) {
            self.pid = pid
            self.commands = commands
            self.task = task
        }

        static func open(in fixture: StoreFixture) async throws -> Session {
            let (stream, commands) = AsyncStream<Command>.makeStream()
            let (pids, pidNow) = AsyncStream<Int32>.makeStream()
            let task = Task {
                defer { pidNow.finish() }
                try await fixture.client.withConnection { connection in
                    for try await pid in try await connection.query("SELECT pg_backend_pid()", logger: fixture.logger).decode(Int32.self) {
                        pidNow.yield(pid)
                    }
                    for await command in stream {
                        do {
                            for try await _ in try await connection.query(command.query, logger: fixture.logger) {}
                            command.done.resume()
                        } catch {
                            command.done.resume(throwing: error)
                        }
                    }
                    // Whatever is still open ends with the session's transaction.
                    _ = try? await connection.query("ROLLBACK", logger: fixture.logger)
                }
            }
            for await pid in pids { return Session(pid: pid, commands: commands, task: task) }
            try await task.value
            throw RowHolder.HolderFailure()
        }

        func run(_ query: PostgresQuery) async throws {
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                if case .terminated = commands.yield((query, done)) { done.resume(throwing: CancellationError()) }
            }
        }

        func close() { commands.finish() }
    }

    static func waiter(behind pid: Int32, in fixture: StoreFixture) async throws -> Int32? {
        for _ in 0..<20_000 {
            for try await waiting in try await fixture.client.query(
                "SELECT pid FROM pg_locks WHERE NOT granted AND \(pid) = ANY(pg_blocking_pids(pid)) LIMIT 1", logger: fixture.logger
            ).decode(Int32.self) {
                return waiting
            }
            await Task.yield()
        }
        Issue.record("nobody ever waited for session \(pid)")
        return nil
    }

    static func waitUntil(blockedBehind pid: Int32, atLeast count: Int, in fixture: StoreFixture) async throws {
        for _ in 0..<20_000 {
            for try await waiting in try await fixture.client.query(
                "SELECT count(DISTINCT pid) FROM pg_locks WHERE NOT granted AND \(pid) = ANY(pg_blocking_pids(pid))",
                logger: fixture.logger
            ).decode(Int64.self) where waiting >= count {
                return
            }
            // The second request may queue behind the first (tuple lock), not the holder: count it too.
            for try await waiting in try await fixture.client.query(
                """
                SELECT count(DISTINCT l.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE NOT l.granted AND a.datname = current_database()
                    AND (\(pid) = ANY(pg_blocking_pids(l.pid)) OR EXISTS (
                        SELECT 1 FROM unnest(pg_blocking_pids(l.pid)) b(p) WHERE \(pid) = ANY(pg_blocking_pids(b.p))))
                """,
                logger: fixture.logger
            ).decode(Int64.self) where waiting >= count {
                return
            }
            await Task.yield()
        }
        Issue.record("fewer than \(count) sessions ever waited behind \(pid)")
    }

    static func count(_ query: PostgresQuery, _ fixture: StoreFixture) async throws -> Int {
        var rows = 0
        for try await _ in try await fixture.client.query(query, logger: fixture.logger) { rows += 1 }
        return rows
    }

    static func count(_ query: PostgresQuery, in fixture: StoreFixture) async throws -> Int {
        try await count(query, fixture)
    }

    /// The owner's stored bytes are the sizes of their records and stored assets.
    static func expectAccounting(
        of owner: String, in fixture: StoreFixture, sourceLocation: SourceLocation = #_sourceLocation
    )
        async throws
    {
        for try await (used, records, assets) in try await fixture.client.query(
            """
            SELECT u.used_bytes,
                (SELECT coalesce(sum(r.size), 0)::bigint FROM strata_cloud.records r WHERE r.owner = u.name),
                (SELECT coalesce(sum(octet_length(c.data)), 0)::bigint FROM strata_cloud.asset_chunks c WHERE c.owner = u.name)
            FROM strata_cloud.users u WHERE u.name = \(owner)
            """,
            logger: fixture.logger
        ).decode((Int64, Int64, Int64).self) {
            #expect(used == records + assets, "used_bytes \(used), records \(records) + assets \(assets)", sourceLocation: sourceLocation)
        }
    }

    /// Deleted zones keep no records, tombstones or shares; no share outlives its root record.
    static func expectNoOrphans(
        of owner: String, in fixture: StoreFixture, sourceLocation: SourceLocation = #_sourceLocation
    )
        async throws
    {
        let inDeleted = try await count(
            """
            SELECT 1 FROM strata_cloud.zones z WHERE z.owner = \(owner) AND z.deleted AND (
                EXISTS (SELECT 1 FROM strata_cloud.records r WHERE r.owner = z.owner AND r.zone = z.name)
                OR EXISTS (SELECT 1 FROM strata_cloud.tombstones t WHERE t.owner = z.owner AND t.zone = z.name)
                OR EXISTS (SELECT 1 FROM strata_cloud.shares s WHERE s.owner = z.owner AND s.zone = z.name))
            """, fixture)
        #expect(inDeleted == 0, "\(inDeleted) deleted zones keep rows", sourceLocation: sourceLocation)
        let rootless = try await count(
            """
            SELECT 1 FROM strata_cloud.shares s WHERE s.owner = \(owner) AND NOT EXISTS (
                SELECT 1 FROM strata_cloud.records r WHERE r.owner = s.owner AND r.zone = s.zone AND r.name = s.root)
            """, fixture)
        #expect(rootless == 0, "\(rootless) shares outlive their root", sourceLocation: sourceLocation)
    }
}

/// Failures collected from concurrent workers.
final class Collected: Sendable {
    let list = Mutex<[String]>([])
}

/// A seeded generator: the same requests for the same seed.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
