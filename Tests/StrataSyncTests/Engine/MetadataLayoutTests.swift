import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Testing

@testable import StrataSync

/// The metadata table's layout: a rowid table (its rows, with the last known server record's
/// JSON, are too large for `WITHOUT ROWID`), read by the send in its pending index's order, and
/// rebuilt in place from the `WITHOUT ROWID` table earlier versions created, losing nothing.
@Suite(.timeLimit(.minutes(2))) struct MetadataLayoutTests {
    /// The metadata table as earlier versions created it, and its indexes: the same columns,
    /// `WITHOUT ROWID`, the pending index on the transaction alone. A frozen copy of that
    /// version's text, not this version's, which it must differ from.
    static let earlierMetadataSQL = """
        CREATE TABLE strata_sync.metadata (
            recordType TEXT NOT NULL,
            recordPrimaryKey TEXT NOT NULL,
            recordName TEXT GENERATED ALWAYS AS (recordPrimaryKey || ':' || recordType) VIRTUAL,
            zoneName TEXT NOT NULL,
            ownerName TEXT NOT NULL,
            parentRecordType TEXT,
            parentRecordPrimaryKey TEXT,
            lastKnownServerRecord TEXT,
            serverChangeTag TEXT,
            fieldVersions TEXT NOT NULL DEFAULT '{}',
            pendingOperation TEXT CHECK (pendingOperation IN ('save', 'delete')),
            pendingRevision INTEGER NOT NULL DEFAULT 0,
            pendingTransaction INTEGER,
            userModificationTime TEXT,
            isShared INTEGER NOT NULL DEFAULT 0,
            share TEXT,
            sharePermission TEXT CHECK (sharePermission IN ('none', 'readOnly', 'readWrite')),
            isOwnedByCurrentUser INTEGER GENERATED ALWAYS AS (sharePermission IS NULL) VIRTUAL,
            PRIMARY KEY (recordType, recordPrimaryKey)
        ) WITHOUT ROWID;
        CREATE INDEX strata_sync.metadata_pending ON metadata (pendingTransaction) WHERE pendingOperation IS NOT NULL;
        CREATE INDEX strata_sync.metadata_shares ON metadata (ownerName, zoneName) WHERE share IS NOT NULL;
        CREATE INDEX strata_sync.metadata_zone_roots ON metadata (ownerName, zoneName) WHERE parentRecordType IS NULL;
        """

    /// The metadatabase an earlier version created, with every table this version rebuilds.
    static let earlierSchema = """
        \(earlierMetadataSQL)
        CREATE TABLE strata_sync.counters (
            recordType TEXT NOT NULL, recordPrimaryKey TEXT NOT NULL, columnName TEXT NOT NULL, state TEXT NOT NULL,
            PRIMARY KEY (recordType, recordPrimaryKey, columnName)
        ) WITHOUT ROWID;
        CREATE TABLE strata_sync.unsynced_records (
            recordName TEXT NOT NULL, zoneName TEXT NOT NULL, ownerName TEXT NOT NULL, recordType TEXT NOT NULL,
            reason TEXT NOT NULL CHECK (reason IN ('missingParent', 'unknownTable')), record TEXT NOT NULL,
            PRIMARY KEY (zoneName, ownerName, recordName)
        ) WITHOUT ROWID;
        CREATE TABLE strata_sync.waiting_content (
            recordName TEXT NOT NULL, zoneName TEXT NOT NULL, ownerName TEXT NOT NULL, hash TEXT NOT NULL, content BLOB NOT NULL,
            PRIMARY KEY (zoneName, ownerName, recordName, hash)
        ) WITHOUT ROWID;
        CREATE TABLE strata_sync.quarantined_records (
            recordName TEXT NOT NULL, zoneName TEXT NOT NULL, ownerName TEXT NOT NULL, recordType TEXT NOT NULL,
            error TEXT NOT NULL, record TEXT NOT NULL,
            PRIMARY KEY (zoneName, ownerName, recordName)
        ) WITHOUT ROWID;
        CREATE TRIGGER strata_sync.counters_follow_metadata AFTER DELETE ON metadata BEGIN
            DELETE FROM counters WHERE recordType = OLD.recordType AND recordPrimaryKey = OLD.recordPrimaryKey;
        END;
        """

    @Test(arguments: [false, true])
    func theSendReadsPendingRecordsInTheIndexsOrder(excluding: Bool) async throws {
        let device = try await SyncTestDevice("a", cloud: MockCloud())
        let sql = excluding ? RecordMetadata.pendingExcludingSQL : RecordMetadata.pendingSQL
        let arguments: StatementArguments = excluding ? ["[]", 400] : [400]
        let plan = try await device.database.write { db in
            try db.fetchAll(sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments) { row -> String in try row[3] }
        }
        #expect(plan.contains { $0.contains("metadata_pending") }, "\(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
    }

    /// The opcodes SQLite compiles an insert of default values into `table` to.
    static func insertOpcodes(_ table: String, in db: Database) throws -> [String] {
        try db.fetchAll(sql: "EXPLAIN INSERT INTO \(table) DEFAULT VALUES") { row -> String in try row[1] }
    }

    @Test func noInsertIntoTheMetadatabaseOrTheLogBuildsATemporaryTable() async throws {
        // An `IN` list of three or more constants in a `CHECK` is a temporary b-tree, built at
        // every execution of an insert (`OpenEphemeral`).
        let device = try await SyncTestDevice("a", cloud: MockCloud())
        let found = try await device.database.write { db in
            let tables = try String.fetchAll(
                db, sql: "SELECT name FROM strata_sync.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            var found: [String: [String]] = [:]
            for table in tables.map({ "strata_sync.\($0)" }) + ["main.\(ChangeLog.tableName)"] {
                found[table] = try Self.insertOpcodes(table, in: db).filter { $0 == "OpenEphemeral" }
            }
            return found
        }
        #expect(found.count >= MetadatabaseTable.allCases.count + 1)
        let withTemporaryTables = found.filter { !$0.value.isEmpty }.keys.sorted()
        #expect(withTemporaryTables == [])
    }

    /// Earlier layouts: `WITHOUT ROWID` tables (the first versions), and rowid tables whose
    /// metadata `CHECK`s `sharePermission` with an `IN` list (the version before this one).
    @Test(arguments: [true, false])
    func anEarlierTableIsRebuiltWithEveryRow(withoutRowid: Bool) async throws {
        let database = try DatabaseQueue()
        try await database.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) }
        let versions = #"{"title":"1700000000000.0@a"}"#
        let earlier = withoutRowid ? Self.earlierSchema : Self.earlierSchema.replacingOccurrences(of: ") WITHOUT ROWID;", with: ");")
        #expect(earlier.contains("sharePermission IN ("))
        try await database.writeWithoutTransaction { db in
            try db.execute(sql: "ATTACH DATABASE ':memory:' AS strata_sync")
            try db.execute(sql: MetadatabaseTable.state.createSQL + earlier)
            for index in 0..<50 {
                // Every stored column set, some pending, one shared with a share, with counters.
                try db.execute(
                    sql: """
                        INSERT INTO strata_sync.metadata (recordType, recordPrimaryKey, zoneName, ownerName, parentRecordType,
                            parentRecordPrimaryKey, lastKnownServerRecord, serverChangeTag, fieldVersions, pendingOperation,
                            pendingRevision, pendingTransaction, userModificationTime, isShared, share, sharePermission)
                        VALUES ('games', ?, 'strata.default', 'alice', NULL, NULL, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        "g\(index)", index % 2 == 0 ? "tag\(index)" : nil, versions, index % 3 == 0 ? "save" : nil, index,
                        index % 3 == 0 ? 7 : nil, "1700000000000.0@a", index == 1 ? 1 : 0, index == 1 ? "{}" : nil,
                        index == 4 ? "readOnly" : nil,
                    ])
                try db.execute(
                    sql: "INSERT INTO strata_sync.counters VALUES ('games', ?, 'score', '{}')", arguments: ["g\(index)"])
                // Records of a table this app does not sync, kept aside, their content, and
                // records quarantined: large rows, as the engine keeps them.
                let record = String(repeating: "r", count: 1_500 + index)
                try db.execute(
                    sql: "INSERT INTO strata_sync.unsynced_records VALUES (?, 'strata.default', 'alice', 'notes', 'unknownTable', ?)",
                    arguments: ["n\(index):notes", record])
                try db.execute(
                    sql: "INSERT INTO strata_sync.waiting_content VALUES (?, 'strata.default', 'alice', ?, ?)",
                    arguments: ["n\(index):notes", "h\(index)", Data(repeating: UInt8(index), count: 3_000)])
                try db.execute(
                    sql: "INSERT INTO strata_sync.quarantined_records VALUES (?, 'strata.default', 'alice', 'games', 'bad', ?)",
                    arguments: ["q\(index):games", record])
            }
        }
        // Every column, generated ones included, each quoted, one text per row.
        let columns = [
            "recordType", "recordPrimaryKey", "recordName", "zoneName", "ownerName", "parentRecordType", "parentRecordPrimaryKey",
            "lastKnownServerRecord", "serverChangeTag", "fieldVersions", "pendingOperation", "pendingRevision",
            "pendingTransaction", "userModificationTime", "isShared", "share", "sharePermission", "isOwnedByCurrentUser",
        ]
        let dump =
            "SELECT " + columns.map { "quote(\($0))" }.joined(separator: " || '|' || ")
            + " FROM strata_sync.metadata ORDER BY recordType, recordPrimaryKey"
        let before = try await database.read { db in try String.fetchAll(db, sql: dump) }
        let asideDumps = [
            "SELECT recordName || zoneName || ownerName || recordType || reason || record FROM strata_sync.unsynced_records ORDER BY recordName",
            "SELECT recordName || zoneName || ownerName || hash || hex(content) FROM strata_sync.waiting_content ORDER BY recordName",
            "SELECT recordName || zoneName || ownerName || recordType || error || record FROM strata_sync.quarantined_records ORDER BY recordName",
        ]
        let asideBefore = try await database.read { db in try asideDumps.map { try String.fetchAll(db, sql: $0) } }

        let engine = try await runOnBackgroundThread {
            try SyncEngine(
                for: database, tableNames: SyncTestDevice.tableNames, container: MockCloud().container(user: "alice"),
                configuration: SyncEngineConfiguration(deviceID: "a", schedule: nil, encryption: .disabled), startImmediately: false)
        }
        _ = engine
        let (layout, after, pendingIndex) = try await database.read { db in
            (
                try String.fetchOne(db, sql: "SELECT sql FROM strata_sync.sqlite_master WHERE name = 'metadata'") ?? "",
                try String.fetchAll(db, sql: dump),
                try String.fetchOne(db, sql: "SELECT sql FROM strata_sync.sqlite_master WHERE name = 'metadata_pending'") ?? ""
            )
        }
        #expect(!layout.uppercased().contains("WITHOUT ROWID"))
        #expect(!layout.contains("sharePermission IN ("))
        // The rebuilt table still refuses a permission that is none of the three, and takes
        // each of them and NULL, as the `IN` list did; and inserting builds no temporary table.
        let (refused, accepted, ephemeral) = try await database.write { db in
            let insert =
                "INSERT INTO strata_sync.metadata (recordType, recordPrimaryKey, zoneName, ownerName, sharePermission) VALUES ('games', ?, 'z', 'o', ?)"
            var refused = false
            do { try db.execute(sql: insert, arguments: ["check-owner", "owner"]) } catch { refused = true }
            for (index, permission) in ["none", "readOnly", "readWrite", nil].enumerated() {
                try db.execute(sql: insert, arguments: ["check-\(index)", permission])
            }
            let accepted = try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.metadata WHERE recordPrimaryKey LIKE 'check-%'")
            try db.execute(sql: "DELETE FROM strata_sync.metadata WHERE recordPrimaryKey LIKE 'check-%'")
            return (refused, accepted, try Self.insertOpcodes("strata_sync.metadata", in: db).filter { $0 == "OpenEphemeral" })
        }
        #expect(refused)
        #expect(accepted == 4)
        #expect(ephemeral.isEmpty)
        let (asideLayouts, asideAfter) = try await database.read { db in
            (
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT sql FROM strata_sync.sqlite_master
                        WHERE name IN ('unsynced_records', 'waiting_content', 'quarantined_records')
                        """),
                try asideDumps.map { try String.fetchAll(db, sql: $0) }
            )
        }
        #expect(asideLayouts.count == 3 && asideLayouts.allSatisfy { !$0.uppercased().contains("WITHOUT ROWID") })
        #expect(asideAfter == asideBefore)
        #expect(asideAfter.map(\.count) == [50, 50, 50])
        #expect(pendingIndex.contains("pendingTransaction, recordType, recordPrimaryKey"))
        #expect(after == before)
        #expect(after.count == 50)
        // The counters still follow their metadata.
        let counters = try await database.write { db in
            try db.execute(sql: "DELETE FROM strata_sync.metadata WHERE recordPrimaryKey = 'g3'")
            return try String.fetchAll(db, sql: "SELECT recordPrimaryKey FROM strata_sync.counters ORDER BY recordPrimaryKey")
        }
        #expect(counters.count == 49 && !counters.contains("g3"))
    }
}
