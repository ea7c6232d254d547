import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Testing

@testable import StrataSync

/// An outside tester's checks of the documented page size of the metadatabase: a new file is
/// made of 16 KB pages, one an earlier version made keeps its 4 KB pages, and nothing is lost
/// either way, whatever the rows, the connections and the launches.
@Suite(.timeLimit(.minutes(2))) struct OutsideMetadatabasePageTests {
    static let container = "iCloud.strata.outside-pages"
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")
    static let schemaSQL = "CREATE TABLE IF NOT EXISTS notes (id TEXT PRIMARY KEY NOT NULL, body TEXT, data BLOB)"

    // MARK: - Helpers

    /// The page size in a database file's header (the reader the page-size suite uses).
    static func headerPageSize(of path: String) throws -> Int {
        try MetadatabasePageSizeTests.headerPageSize(of: path)
    }

    static func metadatabasePath(of databasePath: String, container: String = container) throws -> String {
        try #require(Metadatabase.location(for: .file(path: databasePath), containerIdentifier: container).path)
    }

    static func engine(_ writer: any DatabaseWriter, cloud: MockCloud, device: String) async throws -> SyncEngine {
        try await writer.write { db in try db.execute(sql: schemaSQL) }
        return try SyncEngine(
            for: writer, tableNames: ["notes"], container: cloud.container(user: "alice"),
            configuration: SyncEngineConfiguration(
                deviceID: device, batchSize: 100, fetchPageSize: 100, schedule: nil, encryption: .disabled),
            startImmediately: false)
    }

    static func insert(_ writer: any DatabaseWriter, prefix: String, count: Int, bodyLength: Int = 50) async throws {
        try await writer.write { db in
            for index in 0..<count {
                try db.execute(
                    sql: "INSERT INTO notes (id, body) VALUES (?, ?)",
                    arguments: ["\(prefix)\(index)", String(repeating: "b", count: bodyLength) + "\(index)"])
            }
        }
    }

    /// The metadatabase's page size and `integrity_check`, as the writer sees them.
    static func metadatabaseState(_ writer: any DatabaseWriter) async throws -> (pageSize: Int?, integrity: [String]) {
        try await writer.writeWithoutTransaction { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA strata_sync.page_size"),
                try String.fetchAll(db, sql: "PRAGMA strata_sync.integrity_check")
            )
        }
    }

    static func noteCount(_ writer: any DatabaseWriter) async throws -> Int {
        try await writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") ?? -1 }
    }

    /// Rewrites the metadatabase at `path` with 4 KB pages, in WAL mode, as an earlier version
    /// would have left it.
    static func rewriteWithSmallPages(_ path: String) async throws {
        let queue = try DatabaseQueue(path: path)
        try await queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
            try db.execute(sql: "PRAGMA page_size = 4096")
            try db.execute(sql: "VACUUM")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
        }
        let pageSize = try await queue.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size") }
        try #require(pageSize == 4_096, "the test could not make a 4 KB metadatabase")
        queue.close()
    }

    // MARK: - Tests

    /// A metadatabase an earlier version made (4 KB pages, WAL, with the engine's rows) keeps
    /// its pages through two more launches that sync hundreds of rows both ways, and loses
    /// nothing: nothing already sent is sent again, every row arrives.
    @Test func anOlderSmallPageMetadatabaseKeepsItsPagesAndRowsThroughHeavySync() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cloud = MockCloud(identifier: Self.container)
        let path = folder.path("a.sqlite")
        let metadatabase = try Self.metadatabasePath(of: path)
        do {
            let pool = try DatabasePool(path: path)
            let engine = try await Self.engine(pool, cloud: cloud, device: "a")
            try await Self.insert(pool, prefix: "old", count: 150)
            try await engine.syncChanges()
            try await engine.syncChanges()
            pool.close()
        }
        try await Self.rewriteWithSmallPages(metadatabase)
        let sentBefore = cloud.modifyRequestSizes.reduce(0, +)
        #expect(sentBefore == 150)

        // Another device sends 300 rows meanwhile.
        let other = try DatabaseQueue(path: folder.path("b.sqlite"))
        let otherEngine = try await Self.engine(other, cloud: cloud, device: "b")
        try await otherEngine.fetchChanges()
        try await Self.insert(other, prefix: "b", count: 300, bodyLength: 3_000)
        try await otherEngine.sendChanges()

        for launch in 0..<2 {
            let pool = try DatabasePool(path: path)
            let engine = try await Self.engine(pool, cloud: cloud, device: "a")
            #expect(try await engine.pendingCount() == 0, "launch \(launch): a sent row waits again")
            if launch == 0 {
                try await Self.insert(pool, prefix: "new", count: 250, bodyLength: 2_000)
                try await pool.write { db in
                    try db.execute(sql: "UPDATE notes SET body = 'edited' WHERE id GLOB 'old*'")
                }
            }
            try await engine.syncChanges()
            try await engine.syncChanges()
            #expect(try await engine.pendingCount() == 0, "launch \(launch)")
            #expect(try await Self.noteCount(pool) == 700, "launch \(launch)")
            let edited = try await pool.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM notes WHERE body = 'edited'")
            }
            #expect(edited == 150, "launch \(launch)")
            let state = try await Self.metadatabaseState(pool)
            #expect(state.pageSize == 4_096, "launch \(launch)")
            #expect(state.integrity == ["ok"], "launch \(launch)")
            pool.close()
            #expect(try Self.headerPageSize(of: metadatabase) == 4_096, "launch \(launch)")
        }
        // The old rows' edits and the new rows went once each; the second launch sent nothing.
        #expect(cloud.modifyRequestSizes.reduce(0, +) - sentBefore == 300 + 250 + 150)
        #expect(cloud.records(in: Self.zone).count == 700)
        try await otherEngine.fetchChanges()
        #expect(try await Self.noteCount(other) == 700)
        other.close()
    }

    /// An earlier version that stopped without a checkpoint left its rows in the metadatabase's
    /// WAL file only, with a 4 KB main file: attaching keeps the rows and the 4 KB pages.
    @Test func anOlderMetadatabaseWithItsRowsOnlyInItsWALKeepsThem() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let metadatabase = try Self.metadatabasePath(of: folder.databasePath)
        let scratch = folder.path("scratch.sqlite")
        let earlier = try DatabaseQueue(path: scratch)
        try await earlier.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA page_size = 4096")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            try db.execute(sql: MetadatabaseTable.state.createSQL.replacingOccurrences(of: "strata_sync.", with: ""))
            for index in 0..<200 {
                try db.execute(
                    sql: "INSERT INTO state VALUES (?, ?)",
                    arguments: ["kept\(index)", String(repeating: "v", count: 500)])
            }
        }
        // A crash: the files as they are while the connection is still open.
        try FileManager.default.copyItem(atPath: scratch, toPath: metadatabase)
        try FileManager.default.copyItem(atPath: scratch + "-wal", toPath: metadatabase + "-wal")
        earlier.close()
        let walSize = try #require(
            try FileManager.default.attributesOfItem(atPath: metadatabase + "-wal")[.size] as? Int)
        try #require(walSize > 100_000, "the rows are not in the WAL file")

        let pool = try DatabasePool(path: folder.databasePath)
        let (pageSize, kept, integrity) = try await pool.writeWithoutTransaction { db in
            try db.attachMetadatabase(containerIdentifier: Self.container)
            try db.execute(sql: "INSERT INTO strata_sync.state VALUES ('written', 'after attaching')")
            return (
                try Int.fetchOne(db, sql: "PRAGMA strata_sync.page_size"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.state WHERE key GLOB 'kept*' OR key = 'written'"),
                try String.fetchAll(db, sql: "PRAGMA strata_sync.integrity_check")
            )
        }
        #expect(pageSize == 4_096)
        #expect(kept == 201)
        #expect(integrity == ["ok"])
        pool.close()
        #expect(try Self.headerPageSize(of: metadatabase) == 4_096)
    }

    /// Rows far larger than a 16 KB page (a 40,000-character text and a 100 KB blob, both kept
    /// inside the record) go A → cloud → B and back, whole, and both metadatabases stay sound.
    @Test func rowsLargerThanAPageRoundTripWhole() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cloud = MockCloud(identifier: Self.container)
        let a = try DatabasePool(path: folder.path("a.sqlite"))
        let b = try DatabaseQueue(path: folder.path("b.sqlite"))
        let engineA = try await Self.engine(a, cloud: cloud, device: "a")
        let engineB = try await Self.engine(b, cloud: cloud, device: "b")
        let text = String((0..<40_000).map { index in Character(UnicodeScalar(UInt8(97 + index % 26))) })
        let blob = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try await a.write { db in
            for index in 0..<20 {
                try db.execute(
                    sql: "INSERT INTO notes VALUES (?, ?, ?)",
                    arguments: ["big\(index)", text + "\(index)", blob + Data([UInt8(index)])])
            }
        }
        try await engineA.sendChanges()
        try await engineB.fetchChanges()
        let (ids, bodies, datas) = try await b.read { db in
            (
                try String.fetchAll(db, sql: "SELECT id FROM notes ORDER BY id"),
                try String.fetchAll(db, sql: "SELECT body FROM notes ORDER BY id"),
                try Data.fetchAll(db, sql: "SELECT data FROM notes ORDER BY id")
            )
        }
        #expect(ids.count == 20)
        #expect(bodies.count == 20 && datas.count == 20)
        for (offset, id) in ids.enumerated() where offset < bodies.count && offset < datas.count {
            let index = try #require(Int(id.dropFirst(3)))
            #expect(bodies[offset] == text + "\(index)", "\(id)")
            #expect(datas[offset] == blob + Data([UInt8(index)]), "\(id)")
        }
        // The rows the engine keeps for them are larger than a page, as the test means them to be.
        let largest = try await a.writeWithoutTransaction { db in
            try Int.fetchOne(db, sql: "SELECT max(length(lastKnownServerRecord)) FROM strata_sync.metadata")
        }
        #expect((largest ?? 0) > 16_384, "largest kept record: \(largest ?? -1) bytes")
        // B edits the large text; A gets the edit.
        try await b.write { db in
            try db.execute(sql: "UPDATE notes SET body = body || 'B' WHERE id = 'big3'")
        }
        try await engineB.sendChanges()
        try await engineA.fetchChanges()
        let back = try await a.read { db in try String.fetchOne(db, sql: "SELECT body FROM notes WHERE id = 'big3'") }
        #expect(back == text + "3B")
        #expect(try await engineA.pendingCount() == 0)
        #expect(try await engineB.pendingCount() == 0)
        for (name, writer) in [("a", a as any DatabaseWriter), ("b", b)] {
            let state = try await Self.metadatabaseState(writer)
            #expect(state.pageSize == 16_384, "\(name)")
            #expect(state.integrity == ["ok"], "\(name)")
        }
        a.close()
        b.close()
        #expect(try Self.headerPageSize(of: Self.metadatabasePath(of: folder.path("a.sqlite"))) == 16_384)
        #expect(try Self.headerPageSize(of: Self.metadatabasePath(of: folder.path("b.sqlite"))) == 16_384)
    }

    /// An engine on a `DatabaseQueue` or a `DatabasePool` makes a 16 KB metadatabase; the file
    /// reopened with the other kind of connection keeps its pages and its rows.
    @Test(arguments: [false, true])
    func queueAndPoolMakeLargePagesAndReopenWithTheOther(poolFirst: Bool) async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cloud = MockCloud(identifier: Self.container)
        let first: any DatabaseWriter =
            poolFirst ? try DatabasePool(path: folder.databasePath) : try DatabaseQueue(path: folder.databasePath)
        let engine = try await Self.engine(first, cloud: cloud, device: "a")
        try await Self.insert(first, prefix: "n", count: 120, bodyLength: 1_000)
        try await engine.syncChanges()
        #expect(try await Self.metadatabaseState(first).pageSize == 16_384)
        if let pool = first as? DatabasePool { pool.close() } else if let queue = first as? DatabaseQueue { queue.close() }
        #expect(try Self.headerPageSize(of: Self.metadatabasePath(of: folder.databasePath)) == 16_384)

        let second: any DatabaseWriter =
            poolFirst ? try DatabaseQueue(path: folder.databasePath) : try DatabasePool(path: folder.databasePath)
        let reopened = try await Self.engine(second, cloud: cloud, device: "a")
        #expect(try await reopened.pendingCount() == 0)
        try await Self.insert(second, prefix: "m", count: 30)
        try await reopened.syncChanges()
        #expect(try await reopened.pendingCount() == 0)
        #expect(cloud.records(in: Self.zone).count == 150)
        #expect(cloud.modifyRequestSizes.reduce(0, +) == 150)
        let state = try await Self.metadatabaseState(second)
        #expect(state.pageSize == 16_384)
        #expect(state.integrity == ["ok"])
        if let pool = second as? DatabasePool { pool.close() } else if let queue = second as? DatabaseQueue { queue.close() }
        #expect(try Self.headerPageSize(of: Self.metadatabasePath(of: folder.databasePath)) == 16_384)
    }

    /// Closed after a send and before the next (changes logged, not yet drained), the file
    /// reopens with its pages, and the rest goes once.
    @Test func closingBetweenSendsLosesNothing() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cloud = MockCloud(identifier: Self.container)
        for launch in 0..<3 {
            let pool = try DatabasePool(path: folder.databasePath)
            let engine = try await Self.engine(pool, cloud: cloud, device: "a")
            #expect(try await engine.pendingCount() == (launch == 0 ? 0 : 100), "launch \(launch)")
            if launch > 0 { try await engine.sendChanges() }
            if launch < 2 {
                try await Self.insert(pool, prefix: "l\(launch)-", count: 100, bodyLength: 4_000)
            }
            #expect(try await Self.metadatabaseState(pool).pageSize == 16_384, "launch \(launch)")
            pool.close()
            #expect(try Self.headerPageSize(of: Self.metadatabasePath(of: folder.databasePath)) == 16_384)
        }
        #expect(cloud.records(in: Self.zone).count == 200)
        #expect(cloud.modifyRequestSizes.reduce(0, +) == 200)
    }

    /// Two containers' metadatabases of one database file are two files: an earlier version's
    /// 4 KB one keeps its pages while the other container's new one gets 16 KB pages.
    @Test func twoContainersOnOneFileHaveTheirOwnPages() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let other = "iCloud.strata.outside-pages.other"
        let oldPath = try Self.metadatabasePath(of: folder.databasePath)
        let newPath = try Self.metadatabasePath(of: folder.databasePath, container: other)
        #expect(oldPath != newPath)
        let earlier = try DatabaseQueue(path: oldPath)
        try await earlier.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA page_size = 4096")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: MetadatabaseTable.state.createSQL.replacingOccurrences(of: "strata_sync.", with: ""))
            try db.execute(sql: "INSERT INTO state VALUES ('old', 'yes')")
        }
        earlier.close()
        let first = try DatabaseQueue(path: folder.databasePath)
        let second = try DatabaseQueue(path: folder.databasePath)
        for (queue, container, expected) in [(first, Self.container, 4_096), (second, other, 16_384)] {
            let (pageSize, file, integrity) = try await queue.writeWithoutTransaction { db in
                try db.attachMetadatabase(containerIdentifier: container)
                try db.execute(sql: "INSERT INTO strata_sync.state VALUES (?, 'x')", arguments: [container])
                return (
                    try Int.fetchOne(db, sql: "PRAGMA strata_sync.page_size"),
                    try String.fetchOne(db, sql: "SELECT file FROM pragma_database_list WHERE name = 'strata_sync'"),
                    try String.fetchAll(db, sql: "PRAGMA strata_sync.integrity_check")
                )
            }
            #expect(pageSize == expected, "\(container)")
            #expect(integrity == ["ok"], "\(container)")
            #expect(file?.hasSuffix(".metadata-\(container).sqlite") == true, "\(container): \(file ?? "nil")")
        }
        let oldKeys = try await first.read { db in
            try String.fetchAll(db, sql: "SELECT key FROM strata_sync.state ORDER BY key")
        }
        #expect(oldKeys.contains("old") && oldKeys.contains(Self.container) && !oldKeys.contains(other))
        first.close()
        second.close()
        #expect(try Self.headerPageSize(of: oldPath) == 4_096)
        #expect(try Self.headerPageSize(of: newPath) == 16_384)
    }

    /// A metadatabase file that is not a database (garbage, or a few bytes of text) is an error
    /// from attaching and from the engine, and is left as it was: never silently replaced by a
    /// new file of 16 KB pages. The user's own database stays usable.
    @Test(arguments: [
        Data((0..<8_192).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }),
        Data("this is not SQLite".utf8),
    ])
    func aGarbageMetadatabaseIsAnErrorAndIsLeftAlone(garbage: Data) async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let metadatabase = try Self.metadatabasePath(of: folder.databasePath)
        #expect(FileManager.default.createFile(atPath: metadatabase, contents: garbage))
        let queue = try DatabaseQueue(path: folder.databasePath)
        try await queue.write { db in
            try db.execute(sql: Self.schemaSQL)
            try db.execute(sql: "INSERT INTO notes (id, body) VALUES ('mine', 'kept')")
        }
        // The error names the file at fault.
        let namesTheFile: @Sendable (any Error) -> Bool = { error in
            String(describing: error).contains(".metadata-\(Self.container).sqlite")
        }
        await #expect {
            try await queue.writeWithoutTransaction { db in
                try db.attachMetadatabase(containerIdentifier: Self.container)
                _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.state")
            }
        } throws: { error in namesTheFile(error) }
        #expect {
            _ = try SyncEngine(
                for: queue, tableNames: ["notes"], container: MockCloud(identifier: Self.container).container(user: "alice"),
                configuration: SyncEngineConfiguration(deviceID: "a", schedule: nil, encryption: .disabled),
                startImmediately: false)
        } throws: { error in namesTheFile(error) }
        #expect(FileManager.default.contents(atPath: metadatabase) == garbage)
        let body = try await queue.read { db in try String.fetchOne(db, sql: "SELECT body FROM notes WHERE id = 'mine'") }
        #expect(body == "kept")
        queue.close()
        #expect(FileManager.default.contents(atPath: metadatabase) == garbage)
    }

    /// Sign-out on a new metadatabase empties its account tables and leaves it a sound file of
    /// 16 KB pages, which the next account syncs into from the start.
    @Test func signOutKeepsASoundLargePageFile() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cloud = MockCloud(identifier: Self.container)
        let pool = try DatabasePool(path: folder.databasePath)
        let engine = try await Self.engine(pool, cloud: cloud, device: "a")
        try await Self.insert(pool, prefix: "n", count: 200, bodyLength: 2_000)
        try await engine.syncChanges()
        try await engine.deleteLocalData()
        let state = try await Self.metadatabaseState(pool)
        #expect(state.pageSize == 16_384)
        #expect(state.integrity == ["ok"])
        pool.close()
        #expect(try Self.headerPageSize(of: Self.metadatabasePath(of: folder.databasePath)) == 16_384)
    }

    /// The documented setup (`prepareDatabase` attaches on every connection) where the app's
    /// first use of a new file is a read, before anything writes: the reader's attach does not
    /// make the file with 4 KB pages, and the header says 16 KB while the pool is still open.
    @Test func aReadFirstThroughTheDocumentedSetupStillMakesLargePages() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let metadatabase = try Self.metadatabasePath(of: folder.databasePath)
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.attachMetadatabase(containerIdentifier: Self.container) }
        let pool = try DatabasePool(path: folder.databasePath, configuration: configuration)
        let readPageSize = try await pool.read { db in try Int.fetchOne(db, sql: "PRAGMA strata_sync.page_size") }
        let cloud = MockCloud(identifier: Self.container)
        let engine = try await Self.engine(pool, cloud: cloud, device: "a")
        try await Self.insert(pool, prefix: "n", count: 50)
        try await engine.sendChanges()
        let (pageSize, mode) = try await pool.writeWithoutTransaction { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA strata_sync.page_size"),
                try String.fetchOne(db, sql: "PRAGMA strata_sync.journal_mode")
            )
        }
        let readerSees = try await pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.metadata WHERE lastKnownServerRecord IS NOT NULL")
        }
        #expect(pageSize == 16_384)
        #expect(readPageSize == 16_384)
        #expect(mode == "wal")
        #expect(readerSees == 50)
        #expect(try Self.headerPageSize(of: metadatabase) == 16_384, "header while the pool is open")
        pool.close()
        #expect(try Self.headerPageSize(of: metadatabase) == 16_384)
    }

    /// An engine on a queue whose own file keeps the rollback journal still makes its new
    /// metadatabase of 16 KB pages, header included while the queue is open. (Which journal
    /// the metadatabase then uses is not documented: WAL, or the main file's rollback journal,
    /// which SQLite makes atomic across both files, are both accepted.)
    @Test func aQueueInRollbackModeMakesAMetadatabaseOfLargePages() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let metadatabase = try Self.metadatabasePath(of: folder.databasePath)
        let queue = try DatabaseQueue(path: folder.databasePath)
        let mainMode = try await queue.writeWithoutTransaction { db in
            try String.fetchOne(db, sql: "PRAGMA main.journal_mode = DELETE")
        }
        #expect(mainMode == "delete")
        let engine = try await Self.engine(queue, cloud: MockCloud(identifier: Self.container), device: "a")
        try await Self.insert(queue, prefix: "n", count: 50)
        try await engine.sendChanges()
        let (pageSize, integrity) = try await Self.metadatabaseState(queue)
        let mode = try await queue.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA strata_sync.journal_mode") }
        #expect(pageSize == 16_384)
        #expect(mode == "wal" || mode == "delete", "\(mode ?? "nil")")
        #expect(integrity == ["ok"])
        #expect(try Self.headerPageSize(of: metadatabase) == 16_384, "header while the queue is open")
        queue.close()
    }

    /// An earlier version's metadatabase of 4 KB pages in rollback mode (made through a queue
    /// whose file keeps the rollback journal) keeps its pages and its rows when a pool opens
    /// it, or a queue again.
    @Test(arguments: [false, true])
    func anOlderRollbackModeMetadatabaseKeepsItsPagesAndRows(reopenWithPool: Bool) async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let metadatabase = try Self.metadatabasePath(of: folder.databasePath)
        let earlier = try DatabaseQueue(path: metadatabase)
        try await earlier.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA page_size = 4096")
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
            try db.execute(sql: MetadatabaseTable.state.createSQL.replacingOccurrences(of: "strata_sync.", with: ""))
            for index in 0..<100 {
                try db.execute(sql: "INSERT INTO state VALUES (?, 'v')", arguments: ["kept\(index)"])
            }
        }
        earlier.close()
        #expect(try Self.headerPageSize(of: metadatabase) == 4_096)
        let writer: any DatabaseWriter =
            reopenWithPool ? try DatabasePool(path: folder.databasePath) : try DatabaseQueue(path: folder.databasePath)
        let engine = try await Self.engine(writer, cloud: MockCloud(identifier: Self.container), device: "a")
        try await Self.insert(writer, prefix: "n", count: 40)
        try await engine.syncChanges()
        let (pageSize, integrity) = try await Self.metadatabaseState(writer)
        let kept = try await writer.writeWithoutTransaction { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.state WHERE key GLOB 'kept*'")
        }
        #expect(pageSize == 4_096)
        #expect(kept == 100)
        #expect(integrity == ["ok"])
        #expect(try await engine.pendingCount() == 0)
        if let pool = writer as? DatabasePool { pool.close() } else if let queue = writer as? DatabaseQueue { queue.close() }
        #expect(try Self.headerPageSize(of: metadatabase) == 4_096)
    }
}
