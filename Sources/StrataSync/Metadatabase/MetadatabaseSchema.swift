/// The metadatabase's tables.
enum MetadatabaseSchema {
    static let createSQL = """
        CREATE TABLE IF NOT EXISTS strata_sync.metadata (
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
        CREATE INDEX IF NOT EXISTS strata_sync.metadata_pending
            ON metadata (pendingTransaction) WHERE pendingOperation IS NOT NULL;
        CREATE TABLE IF NOT EXISTS strata_sync.state (
            key TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS strata_sync.table_schemas (
            tableName TEXT PRIMARY KEY NOT NULL,
            columns TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS strata_sync.unsynced_records (
            recordName TEXT NOT NULL,
            zoneName TEXT NOT NULL,
            ownerName TEXT NOT NULL,
            recordType TEXT NOT NULL,
            reason TEXT NOT NULL CHECK (reason IN ('missingParent', 'unknownTable')),
            record TEXT NOT NULL,
            PRIMARY KEY (zoneName, ownerName, recordName)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS strata_sync.quarantined_records (
            recordName TEXT NOT NULL,
            zoneName TEXT NOT NULL,
            ownerName TEXT NOT NULL,
            recordType TEXT NOT NULL,
            error TEXT NOT NULL,
            record TEXT NOT NULL,
            PRIMARY KEY (zoneName, ownerName, recordName)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS strata_sync.moved_records (
            recordName TEXT NOT NULL,
            zoneName TEXT NOT NULL,
            ownerName TEXT NOT NULL,
            depth INTEGER NOT NULL,
            PRIMARY KEY (zoneName, ownerName, recordName)
        ) WITHOUT ROWID;
        """
}
