import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Testing

@testable import StrataSync

/// A new metadatabase is made of 16 KB pages (``Metadatabase/pageSize``), set before WAL
/// writes its first page; one an earlier version made keeps its own, and works as before.
@Suite(.timeLimit(.minutes(2))) struct MetadatabasePageSizeTests {
    static let container = "iCloud.strata.page-size"

    /// The page size written in a database file's header: bytes 16 and 17, big-endian, where
    /// 1 stands for 65,536.
    static func headerPageSize(of path: String) throws -> Int {
        let header = try #require(FileManager.default.contents(atPath: path)).prefix(18)
        try #require(header.count == 18, "the file \(path) has no header")
        let size = Int(header[header.startIndex + 16]) << 8 | Int(header[header.startIndex + 17])
        return size == 1 ? 65_536 : size
    }

    static func metadatabasePath(of databasePath: String) throws -> String {
        try #require(Metadatabase.location(for: .file(path: databasePath), containerIdentifier: container).path)
    }

    @Test func aNewMetadatabaseFileHasLargePagesAndWAL() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let pool = try DatabasePool(path: folder.databasePath)
        let (pageSize, mode) = try await pool.writeWithoutTransaction { db in
            try db.attachMetadatabase(containerIdentifier: Self.container)
            return (
                try Int.fetchOne(db, sql: "PRAGMA strata_sync.page_size"),
                try String.fetchOne(db, sql: "PRAGMA strata_sync.journal_mode")
            )
        }
        #expect(pageSize == Metadatabase.pageSize)
        #expect(mode == "wal")
        pool.close()
        #expect(try Self.headerPageSize(of: Self.metadatabasePath(of: folder.databasePath)) == 16_384)
    }

    @Test func anEngineOnANewFileWritesItsRowsInLargePages() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let pool = try DatabasePool(path: folder.databasePath)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE notes (id TEXT PRIMARY KEY NOT NULL, body TEXT)") }
        let cloud = MockCloud()
        let engine = try SyncEngine(
            for: pool, tableNames: ["notes"], container: cloud.container(user: "alice"),
            configuration: SyncEngineConfiguration(deviceID: "a", schedule: nil, encryption: .disabled), startImmediately: false)
        try await pool.write { db in
            for index in 0..<200 {
                try db.execute(sql: "INSERT INTO notes VALUES (?, ?)", arguments: ["n\(index)", String(repeating: "x", count: index)])
            }
        }
        try await engine.sendChanges()
        let (pageSize, sent) = try await pool.writeWithoutTransaction { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA strata_sync.page_size"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.metadata WHERE lastKnownServerRecord IS NOT NULL")
            )
        }
        #expect(pageSize == 16_384)
        #expect(sent == 200)
        #expect(cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).count == 200)
        pool.close()
    }

    /// A metadatabase of 4 KB pages, as earlier versions made it, keeps them: SQLite changes a
    /// WAL database's page size only by rewriting it, which attaching never does.
    @Test(arguments: [4_096, 65_536])
    func anExistingMetadatabaseKeepsItsPageSize(existing: Int) async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let metadatabase = try Self.metadatabasePath(of: folder.databasePath)
        let earlier = try DatabaseQueue(path: metadatabase)
        try await earlier.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA page_size = \(existing)")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: MetadatabaseTable.state.createSQL.replacingOccurrences(of: "strata_sync.", with: ""))
            try db.execute(sql: "INSERT INTO state VALUES ('kept', 'yes')")
        }
        earlier.close()
        let pool = try DatabasePool(path: folder.databasePath)
        let (pageSize, kept) = try await pool.writeWithoutTransaction { db in
            try db.attachMetadatabase(containerIdentifier: Self.container)
            try db.execute(sql: "INSERT INTO strata_sync.state VALUES ('written', 'after attaching')")
            return (
                try Int.fetchOne(db, sql: "PRAGMA strata_sync.page_size"),
                try String.fetchAll(db, sql: "SELECT key FROM strata_sync.state WHERE key IN ('kept', 'written') ORDER BY key")
            )
        }
        #expect(pageSize == existing)
        #expect(kept == ["kept", "written"])
        pool.close()
        #expect(try Self.headerPageSize(of: metadatabase) == existing)
    }

    /// Readers that attach it in `prepareDatabase` (the documented setup) see what the writer
    /// wrote in the new file, and after a relaunch the file still has its pages and its rows.
    @Test func readersAndARelaunchSeeTheRowsOfANewFile() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.attachMetadatabase(containerIdentifier: Self.container) }
        for launch in 0..<2 {
            let pool = try DatabasePool(path: folder.databasePath, configuration: configuration)
            if launch == 0 {
                try await pool.write { db in
                    for index in 0..<300 {
                        try db.execute(
                            sql: "INSERT INTO strata_sync.state VALUES (?, ?)",
                            arguments: ["key\(index)", String(repeating: "v", count: 1_000 + index)])
                    }
                }
            }
            let (pageSize, count) = try await pool.read { db in
                (
                    try Int.fetchOne(db, sql: "PRAGMA strata_sync.page_size"),
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.state WHERE key GLOB 'key*'")
                )
            }
            #expect(pageSize == 16_384, "launch \(launch)")
            #expect(count == 300, "launch \(launch)")
            pool.close()
        }
        #expect(try Self.headerPageSize(of: Self.metadatabasePath(of: folder.databasePath)) == 16_384)
    }

    /// A file that exists but is empty (created by hand, or cut to nothing) holds no database
    /// yet: it gets the new page size. A queue whose main file does not use WAL makes one too.
    @Test(arguments: [false, true])
    func anEmptyFileAndAQueueWithoutWALGetLargePages(emptyFileFirst: Bool) async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let metadatabase = try Self.metadatabasePath(of: folder.databasePath)
        if emptyFileFirst { #expect(FileManager.default.createFile(atPath: metadatabase, contents: Data())) }
        let queue = try DatabaseQueue(path: folder.databasePath)
        let (pageSize, stored) = try await queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
            try db.attachMetadatabase(containerIdentifier: Self.container)
            try db.execute(sql: "INSERT INTO strata_sync.state VALUES ('k', 'v')")
            return (
                try Int.fetchOne(db, sql: "PRAGMA strata_sync.page_size"),
                try String.fetchOne(db, sql: "SELECT value FROM strata_sync.state WHERE key = 'k'")
            )
        }
        #expect(pageSize == 16_384)
        #expect(stored == "v")
        queue.close()
        #expect(try Self.headerPageSize(of: metadatabase) == 16_384)
    }

    /// An in-memory database's metadatabase (previews, tests) takes the page size as well.
    @Test func anInMemoryMetadatabaseHasLargePages() async throws {
        let queue = try DatabaseQueue(named: "page-size-\(UUID().uuidString)")
        let pageSize = try await queue.writeWithoutTransaction { db in
            try db.attachMetadatabase(containerIdentifier: Self.container)
            try db.execute(sql: "INSERT INTO strata_sync.state VALUES ('k', 'v')")
            return try Int.fetchOne(db, sql: "PRAGMA strata_sync.page_size")
        }
        #expect(pageSize == 16_384)
        queue.close()
    }
}
