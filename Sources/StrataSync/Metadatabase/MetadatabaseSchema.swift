import StrataSQLite

/// The metadatabase's tables, declared once: creating the metadatabase, resetting it when it
/// no longer matches the user's file, and forgetting an account's data on sign-out all walk
/// this list, so a table added here is never left out of one of them.
enum MetadatabaseTable: String, CaseIterable, Sendable {
    /// One row per record the engine knows (``SyncMetadata``).
    case metadata
    /// The engine's key-value state (``EngineState``).
    case state
    /// Each synced table's columns as last seen, to notice new tables and columns.
    case tableSchemas = "table_schemas"
    /// Fetched records that cannot be applied yet (a missing parent, an unknown table).
    case unsyncedRecords = "unsynced_records"
    /// The content of large BLOB values of records kept in ``unsyncedRecords``: downloaded with
    /// the record, applied with it later.
    case waitingContent = "waiting_content"
    /// Fetched records that can never be applied as they are.
    case quarantinedRecords = "quarantined_records"
    /// Old copies of records moved to another zone, to delete from the cloud.
    case movedRecords = "moved_records"
    /// The state of each counter column of each record (``CounterState``): what every device
    /// added. Last, as its trigger refers to ``metadata``.
    case counters

    /// The table's name, qualified with the metadatabase's schema.
    var qualifiedName: String { "\(Metadatabase.schemaName).\(rawValue)" }

    /// What the table describes, which decides what a reset keeps.
    enum Scope {
        /// The signed-in account's records: forgotten on sign-out and on every reset.
        case account
        /// The user's file (its tables' columns): forgotten when the file no longer matches.
        case file
        /// Mixed: ``EngineState`` decides key by key.
        case keys
    }

    var scope: Scope {
        switch self {
        case .metadata, .unsyncedRecords, .waitingContent, .quarantinedRecords, .movedRecords, .counters: .account
        case .tableSchemas: .file
        case .state: .keys
        }
    }

    /// The statements that create the table and its indexes when they do not exist.
    var createSQL: String {
        switch self {
        case .metadata:
            // A rowid table, not `WITHOUT ROWID`: "WITHOUT ROWID tables work best when
            // individual rows are not too large. A good rule of thumb is that the average size
            // of a single row in a WITHOUT ROWID table should be less than about 1/20th the
            // size of a database page" (sqlite.org/withoutrowid.html). A row here carries the
            // last known server record and the field versions as JSON, about 1.5 KB: past
            // about 1,000 bytes, a WITHOUT ROWID row spills to an overflow page, so 20,000
            // records took 90 MB where a rowid table takes 41 MB, and writing them cost 30–40 %
            // more (Documentation/Performance.md, issue #27). The pending index carries the
            // key, so the send's `ORDER BY pendingTransaction, recordType, recordPrimaryKey`
            // reads it in order instead of sorting every pending record for each batch.
            """
            CREATE TABLE IF NOT EXISTS strata_sync.metadata (
                \(columnsSQL ?? "")
            );
            CREATE INDEX IF NOT EXISTS strata_sync.metadata_pending
                ON metadata (pendingTransaction, recordType, recordPrimaryKey) WHERE pendingOperation IS NOT NULL;
            CREATE INDEX IF NOT EXISTS strata_sync.metadata_shares
                ON metadata (ownerName, zoneName) WHERE share IS NOT NULL;
            CREATE INDEX IF NOT EXISTS strata_sync.metadata_zone_roots
                ON metadata (ownerName, zoneName) WHERE parentRecordType IS NULL;
            """
        case .state:
            """
            CREATE TABLE IF NOT EXISTS strata_sync.state (
                key TEXT PRIMARY KEY NOT NULL,
                value TEXT NOT NULL
            ) WITHOUT ROWID;
            """
        case .tableSchemas:
            """
            CREATE TABLE IF NOT EXISTS strata_sync.table_schemas (
                tableName TEXT PRIMARY KEY NOT NULL,
                columns TEXT NOT NULL
            ) WITHOUT ROWID;
            """
        // The tables below keep a whole record's JSON, or a large value's content, a row:
        // rowid tables too, for the reason given for ``metadata``.
        case .unsyncedRecords:
            """
            CREATE TABLE IF NOT EXISTS strata_sync.unsynced_records (
                \(columnsSQL ?? "")
            );
            """
        case .waitingContent:
            """
            CREATE TABLE IF NOT EXISTS strata_sync.waiting_content (
                \(columnsSQL ?? "")
            );
            """
        case .quarantinedRecords:
            """
            CREATE TABLE IF NOT EXISTS strata_sync.quarantined_records (
                \(columnsSQL ?? "")
            );
            """
        case .movedRecords:
            """
            CREATE TABLE IF NOT EXISTS strata_sync.moved_records (
                recordName TEXT NOT NULL,
                zoneName TEXT NOT NULL,
                ownerName TEXT NOT NULL,
                depth INTEGER NOT NULL,
                PRIMARY KEY (zoneName, ownerName, recordName)
            ) WITHOUT ROWID;
            """
        case .counters:
            // The trigger forgets a record's counters with its metadata, wherever that row is
            // deleted (a delete sent, a tombstone, a zone gone): a key inserted again later
            // must not inherit the old contributions. Created with the table, so a
            // metadatabase from an older version gets both at its next attach.
            """
            CREATE TABLE IF NOT EXISTS strata_sync.counters (
                recordType TEXT NOT NULL,
                recordPrimaryKey TEXT NOT NULL,
                columnName TEXT NOT NULL,
                state TEXT NOT NULL,
                PRIMARY KEY (recordType, recordPrimaryKey, columnName)
            ) WITHOUT ROWID;
            CREATE TRIGGER IF NOT EXISTS strata_sync.counters_follow_metadata AFTER DELETE ON metadata BEGIN
                DELETE FROM counters WHERE recordType = OLD.recordType AND recordPrimaryKey = OLD.recordPrimaryKey;
            END;
            """
        }
    }

    /// The tables whose rows are too large for `WITHOUT ROWID` (see ``metadata``): earlier
    /// versions created them so, and ``rebuildIfOutdated(in:)`` copies them once.
    static let largeRowTables: [MetadatabaseTable] = [.metadata, .unsyncedRecords, .waitingContent, .quarantinedRecords]

    /// Text of a table's stored `CREATE TABLE` that only an earlier version wrote: `WITHOUT
    /// ROWID` (every table of ``largeRowTables``), and ``metadata``'s `CHECK` of
    /// `sharePermission` as an `IN` list (see ``metadataColumns``).
    func isOutdated(createTableSQL sql: String) -> Bool {
        let text = sql.uppercased()
        if text.contains("WITHOUT ROWID") { return true }
        return self == .metadata && text.contains("SHAREPERMISSION IN (")
    }

    /// The columns and key of a table of ``largeRowTables``, as its `CREATE TABLE` lists them.
    var columnsSQL: String? {
        switch self {
        case .metadata: Self.metadataColumns
        case .unsyncedRecords:
            """
            recordName TEXT NOT NULL,
            zoneName TEXT NOT NULL,
            ownerName TEXT NOT NULL,
            recordType TEXT NOT NULL,
            reason TEXT NOT NULL CHECK (reason IN ('missingParent', 'unknownTable')),
            record TEXT NOT NULL,
            PRIMARY KEY (zoneName, ownerName, recordName)
            """
        case .waitingContent:
            """
            recordName TEXT NOT NULL,
            zoneName TEXT NOT NULL,
            ownerName TEXT NOT NULL,
            hash TEXT NOT NULL,
            content BLOB NOT NULL,
            PRIMARY KEY (zoneName, ownerName, recordName, hash)
            """
        case .quarantinedRecords:
            """
            recordName TEXT NOT NULL,
            zoneName TEXT NOT NULL,
            ownerName TEXT NOT NULL,
            recordType TEXT NOT NULL,
            error TEXT NOT NULL,
            record TEXT NOT NULL,
            PRIMARY KEY (zoneName, ownerName, recordName)
            """
        case .state, .tableSchemas, .movedRecords, .counters: nil
        }
    }

    /// The stored columns of a table of ``largeRowTables``: what a rebuild copies.
    var storedColumnsSQL: String? {
        switch self {
        case .metadata: Self.metadataStoredColumns
        case .unsyncedRecords: "recordName, zoneName, ownerName, recordType, reason, record"
        case .waitingContent: "recordName, zoneName, ownerName, hash, content"
        case .quarantinedRecords: "recordName, zoneName, ownerName, recordType, error, record"
        case .state, .tableSchemas, .movedRecords, .counters: nil
        }
    }

    /// The columns of ``metadata`` and its key, as its `CREATE TABLE` lists them.
    ///
    /// `sharePermission`'s `CHECK` spells its three values as comparisons, not `IN (…)`: SQLite
    /// compiles an `IN` list of three or more constants into a temporary b-tree (`EXPLAIN`
    /// shows `OpenEphemeral`), built again at every execution of every `INSERT`, and the
    /// metadata row is written once or twice a record. That cost 3.7 µs a row, more than the
    /// rest of the insert (`Documentation/Performance.md`, nineteenth round).
    static let metadataColumns = """
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
            sharePermission TEXT CHECK (sharePermission = 'none' OR sharePermission = 'readOnly' OR sharePermission = 'readWrite'),
            isOwnedByCurrentUser INTEGER GENERATED ALWAYS AS (sharePermission IS NULL) VIRTUAL,
            PRIMARY KEY (recordType, recordPrimaryKey)
        """

    /// The stored columns of ``metadata`` (the generated ones are computed).
    static let metadataStoredColumns = """
        recordType, recordPrimaryKey, zoneName, ownerName, parentRecordType, parentRecordPrimaryKey, lastKnownServerRecord,
        serverChangeTag, fieldVersions, pendingOperation, pendingRevision, pendingTransaction, userModificationTime, isShared,
        share, sharePermission
        """

    /// Creates every table that does not exist yet, after rebuilding the tables an earlier
    /// version created otherwise (``largeRowTables``, ``isOutdated(createTableSQL:)``).
    static func createAll(in db: Database) throws {
        for table in largeRowTables { try table.rebuildIfOutdated(in: db) }
        for table in allCases { try db.execute(sql: table.createSQL) }
    }

    /// Copies this table, when an earlier version created it otherwise (``isOutdated(createTableSQL:)``),
    /// into the table this version creates, in one savepoint: its rows, its indexes
    /// (``metadata``'s pending one with its new columns) and, for ``metadata``, the counters'
    /// trigger, which dropping the old table drops, are all there afterwards, or nothing
    /// changed. Once per metadatabase and layout.
    func rebuildIfOutdated(in db: Database) throws {
        guard let columns = columnsSQL, let stored = storedColumnsSQL,
            let sql = try String.fetchOne(
                db, sql: "SELECT sql FROM strata_sync.sqlite_master WHERE type = 'table' AND name = ?", arguments: [rawValue]),
            isOutdated(createTableSQL: sql)
        else { return }
        try db.savepoint {
            try db.execute(
                sql: """
                    CREATE TABLE strata_sync.\(rawValue)_rebuilt (
                        \(columns)
                    );
                    INSERT INTO strata_sync.\(rawValue)_rebuilt (\(stored)) SELECT \(stored) FROM \(qualifiedName);
                    DROP TABLE \(qualifiedName);
                    ALTER TABLE strata_sync.\(rawValue)_rebuilt RENAME TO \(rawValue);
                    """)
            try db.execute(sql: createSQL)
            if self == .metadata { try db.execute(sql: MetadatabaseTable.counters.createSQL) }
        }
    }

    /// Forgets the signed-in account's records and change tokens (sign-out, account switch):
    /// what belongs to the device (its id, its clock, how far the change log was drained) and
    /// to the file (its tables' columns) stays.
    static func forgetAccount(in db: Database) throws {
        for table in allCases where table.scope == .account {
            try db.execute(sql: "DELETE FROM \(table.qualifiedName)")
        }
        try EngineState.forgetAccountKeys(in: db)
    }

    /// Forgets everything that describes the user's file, for a metadatabase found beside a
    /// file it does not describe (erased by the migrator, restored from a backup, replaced):
    /// the account's records and tokens, the tables' columns and the change log's position.
    /// The next sync fetches everything again and sends every local row.
    static func forgetFile(in db: Database) throws {
        try forgetAccount(in: db)
        for table in allCases where table.scope == .file {
            try db.execute(sql: "DELETE FROM \(table.qualifiedName)")
        }
        try EngineState.forgetFileKeys(in: db)
    }
}
