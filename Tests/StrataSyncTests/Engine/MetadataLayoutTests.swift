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
    /// The metadatabase an earlier version created: the same columns, `WITHOUT ROWID`, the
    /// pending index on the transaction alone.
    static let earlierSchema = """
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
        CREATE TABLE strata_sync.counters (
            recordType TEXT NOT NULL, recordPrimaryKey TEXT NOT NULL, columnName TEXT NOT NULL, state TEXT NOT NULL,
            PRIMARY KEY (recordType, recordPrimaryKey, columnName)
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

    @Test func anEarlierWithoutRowidTableIsRebuiltWithEveryRow() async throws {
        let database = try DatabaseQueue()
        try await database.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) }
        let versions = #"{"title":"1700000000000.0@a"}"#
        try await database.writeWithoutTransaction { db in
            try db.execute(sql: "ATTACH DATABASE ':memory:' AS strata_sync")
            try db.execute(sql: MetadatabaseTable.state.createSQL + Self.earlierSchema)
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
