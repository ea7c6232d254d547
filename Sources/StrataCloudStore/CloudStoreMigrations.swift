import Logging
import PostgresNIO

/// The store's schema, as numbered migrations: each runs once, in order; those a database
/// lacks run together in one transaction, under an advisory lock so that many service
/// instances starting together migrate once.
enum CloudStoreMigrations {
    /// The role every request runs as (`SET LOCAL ROLE`): no login, no ownership, no bypass of
    /// row-level security. A service's login role must be a member of it.
    static let requestRole = "strata_request"

    struct Migration: Sendable {
        var version: Int
        var statements: [String]
    }

    static let all: [Migration] = [
        Migration(version: 1, statements: version1),
        Migration(version: 2, statements: CloudStoreSharingSchema.statements),
        Migration(version: 3, statements: quotaStatements),
        // Assets are found by hash among the uploader's and their peers' (row-level security).
        Migration(version: 4, statements: ["CREATE INDEX assets_by_hash ON strata_cloud.assets (hash)"]),
        // The request role may do what the API needs and no more (CloudStoreHardening).
        Migration(version: 5, statements: CloudStoreHardening.statements),
        Migration(version: 6, statements: feedIndexStatements),
        // Public keys and the keys shares carry, for end-to-end encryption (CloudStoreKeysSchema).
        Migration(version: 7, statements: CloudStoreKeysSchema.statements),
        // Users' profiles, which name share participants (CloudStoreProfilesSchema).
        Migration(version: 8, statements: CloudStoreProfilesSchema.statements),
        // Accepting and leaving a share take the zone before the share, as the owner's writes do.
        Migration(version: 9, statements: CloudStoreLockOrderSchema.statements),
        // A tombstone keeps the field versions of the record it removed, so a save sent again
        // after its answer was lost cannot undo a later delete (`CloudModifyRules`). Nullable,
        // without a default: no rewrite of the table, and older tombstones compare with nothing.
        Migration(version: 10, statements: ["ALTER TABLE strata_cloud.tombstones ADD COLUMN field_versions jsonb"]),
        // An owner's statements compare the owner before they look up shares (CloudStoreOwnerFirstPolicies).
        Migration(version: 11, statements: CloudStoreOwnerFirstPolicies.statements),
        // A zone's rows are tied to it by its lock and a trigger, not by keys checked on
        // every row written (CloudStoreZoneRowsByLock).
        Migration(version: 12, statements: CloudStoreZoneRowsByLock.statements),
        // No statistics of payload columns, which no plan reads (CloudStorePayloadStatistics).
        Migration(version: 13, statements: CloudStorePayloadStatistics.statements),
    ]

    /// Migration 6: the feed indexes become partial (`WHERE sequence >= 0`, which every
    /// position satisfies), so only a query that bounds `sequence` can use them.
    ///
    /// A feed index starts with the same `(owner, zone)` as the primary key. While
    /// PostgreSQL's statistics do not know an owner yet (a new user's first sync, before
    /// autovacuum's next `ANALYZE`), it estimates one row for the owner's zone, and costs a
    /// lookup by name through the smaller feed index as cheap as through the primary key: it
    /// then read every record of the zone for each lookup (1.2 ms a lookup at 10,000 records,
    /// 130 ms for a request retagging 100 parents), and a first sync slowed with the square of
    /// its size. Feed queries say `sequence >= 0` in so many words.
    static let feedIndexStatements: [String] = ["records", "tombstones", "departures"].flatMap { table in
        [
            "DROP INDEX strata_cloud.\(table)_feed",
            "CREATE INDEX \(table)_feed ON strata_cloud.\(table) (owner, zone, sequence) WHERE sequence >= 0",
        ]
    }

    /// Migration 3: each user's stored bytes, kept as records are written, for quotas.
    static let quotaStatements: [String] = [
        "ALTER TABLE strata_cloud.users ADD COLUMN used_bytes bigint NOT NULL DEFAULT 0",
        // Adds `p_delta` to the owner's stored bytes unless that would pass `p_quota` (deletes
        // always pass); false when it would. The owner may, and so may a participant who can
        // write one of the owner's shares: their saves count against the owner.
        """
        CREATE FUNCTION strata_cloud.use_bytes(p_owner text, p_delta bigint, p_quota bigint) RETURNS boolean
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
        DECLARE
            me text := current_setting('strata.user', true);
        BEGIN
            IF me IS DISTINCT FROM p_owner AND NOT EXISTS (
                SELECT 1 FROM strata_cloud.share_participants p
                WHERE p.owner = p_owner AND p.participant = me AND p.acceptance = 'accepted' AND p.permission = 'readWrite')
            THEN
                RAISE EXCEPTION 'strata: % may not write for %', me, p_owner USING ERRCODE = '42501';
            END IF;
            UPDATE strata_cloud.users SET used_bytes = greatest(0, used_bytes + p_delta)
            WHERE name = p_owner AND (p_delta <= 0 OR p_quota IS NULL OR used_bytes + p_delta <= p_quota);
            RETURN FOUND;
        END
        $$
        """,
        "REVOKE ALL ON FUNCTION strata_cloud.use_bytes(text, bigint, bigint) FROM PUBLIC",
        "GRANT EXECUTE ON FUNCTION strata_cloud.use_bytes(text, bigint, bigint) TO \(requestRole)",
    ]

    /// Applies the migrations not applied yet, up to version `last`; returns the versions it
    /// applied. (A test stops early to stage a database as an earlier version left it.)
    @discardableResult
    static func run(on client: PostgresClient, logger: Logger, through last: Int = .max) async throws -> [Int] {
        try await client.withTransaction(logger: logger) { connection in
            try await apply(on: connection, logger: logger, through: last)
        }
    }

    /// Applies the migrations over one connection the caller opened and will close: what a
    /// one-shot command uses, with no pool to wind down afterwards.
    @discardableResult
    static func run(on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await connection.withTransaction(logger: logger) { connection in
            try await apply(on: connection, logger: logger)
        }
    }

    /// The migrations' work, inside the caller's transaction.
    private static func apply(on connection: PostgresConnection, logger: Logger, through last: Int = .max) async throws -> [Int] {
        do {
            try await connection.perform("SELECT pg_advisory_xact_lock(hashtext('strata_cloud.migrate'))", logger: logger)
            try await connection.perform("CREATE SCHEMA IF NOT EXISTS strata_cloud", logger: logger)
            try await connection.perform(
                """
                CREATE TABLE IF NOT EXISTS strata_cloud.migrations (
                    version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())
                """,
                logger: logger)
            var applied: Set<Int> = []
            for try await version in try await connection.query("SELECT version FROM strata_cloud.migrations", logger: logger).decode(
                Int.self)
            {
                applied.insert(version)
            }
            var done: [Int] = []
            for migration in all where !applied.contains(migration.version) && migration.version <= last {
                for statement in migration.statements {
                    try await connection.perform(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.perform("INSERT INTO strata_cloud.migrations (version) VALUES (\(migration.version))", logger: logger)
                logger.info("applied migration \(migration.version)")
                done.append(migration.version)
            }
            return done
        }
    }

    /// `owner = the request's user`, evaluated once per query (a sub-select), not per row.
    static let isRequestUser = "(SELECT current_setting('strata.user', true))"

    static let version1: [String] =
        [
            """
            DO $$ BEGIN
                IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '\(requestRole)') THEN
                    CREATE ROLE \(requestRole) NOLOGIN NOSUPERUSER NOBYPASSRLS;
                END IF;
            -- Roles belong to the cluster, while the advisory lock above is per database: two
            -- databases migrating at once both pass the NOT EXISTS check, and the second CREATE ROLE
            -- waits for the first to commit, then fails with unique_violation. The role exists then,
            -- which is all this step needs.
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END $$
            """,
            """
            CREATE TABLE strata_cloud.users (
                name text PRIMARY KEY,
                database_sequence bigint NOT NULL DEFAULT 0)
            """,
            """
            CREATE TABLE strata_cloud.zones (
                owner text NOT NULL REFERENCES strata_cloud.users (name),
                name text NOT NULL,
                sequence bigint NOT NULL DEFAULT 0,
                horizon bigint NOT NULL DEFAULT 0,
                database_change bigint NOT NULL,
                deleted boolean NOT NULL DEFAULT false,
                PRIMARY KEY (owner, name))
            """,
            "CREATE INDEX zones_database_feed ON strata_cloud.zones (owner, database_change)",
            """
            CREATE TABLE strata_cloud.records (
                owner text NOT NULL,
                zone text NOT NULL,
                name text NOT NULL,
                type text NOT NULL,
                fields jsonb NOT NULL,
                field_versions jsonb NOT NULL,
                parent text,
                change_tag text NOT NULL,
                sequence bigint NOT NULL,
                size integer NOT NULL,
                PRIMARY KEY (owner, zone, name),
                FOREIGN KEY (owner, zone) REFERENCES strata_cloud.zones (owner, name) ON DELETE CASCADE)
            """,
            "CREATE INDEX records_feed ON strata_cloud.records (owner, zone, sequence)",
            "CREATE INDEX records_children ON strata_cloud.records (owner, zone, parent) WHERE parent IS NOT NULL",
            """
            CREATE TABLE strata_cloud.tombstones (
                owner text NOT NULL,
                zone text NOT NULL,
                name text NOT NULL,
                type text NOT NULL,
                sequence bigint NOT NULL,
                audience text[] NOT NULL DEFAULT '{}',
                PRIMARY KEY (owner, zone, name),
                FOREIGN KEY (owner, zone) REFERENCES strata_cloud.zones (owner, name) ON DELETE CASCADE)
            """,
            "CREATE INDEX tombstones_feed ON strata_cloud.tombstones (owner, zone, sequence)",
            """
            CREATE TABLE strata_cloud.assets (
                owner text NOT NULL REFERENCES strata_cloud.users (name),
                hash text NOT NULL,
                size bigint NOT NULL,
                chunk_size bigint NOT NULL,
                PRIMARY KEY (owner, hash))
            """,
            """
            CREATE TABLE strata_cloud.asset_chunks (
                owner text NOT NULL,
                hash text NOT NULL,
                index integer NOT NULL,
                encoding integer NOT NULL,
                size bigint NOT NULL,
                crc32 bigint NOT NULL,
                data bytea NOT NULL,
                PRIMARY KEY (owner, hash, index),
                FOREIGN KEY (owner, hash) REFERENCES strata_cloud.assets (owner, hash) ON DELETE CASCADE)
            """,
        ]
        + ["users"].flatMap { table in
            [
                "ALTER TABLE strata_cloud.\(table) ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY self ON strata_cloud.\(table) USING (name = \(isRequestUser)) WITH CHECK (name = \(isRequestUser))",
            ]
        }
        + ["zones", "records", "tombstones", "assets", "asset_chunks"].flatMap { table in
            [
                "ALTER TABLE strata_cloud.\(table) ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY owner ON strata_cloud.\(table) USING (owner = \(isRequestUser)) WITH CHECK (owner = \(isRequestUser))",
            ]
        } + [
            "GRANT USAGE ON SCHEMA strata_cloud TO \(requestRole)",
            """
            GRANT SELECT, INSERT, UPDATE, DELETE ON strata_cloud.users, strata_cloud.zones, strata_cloud.records,
                strata_cloud.tombstones, strata_cloud.assets, strata_cloud.asset_chunks TO \(requestRole)
            """,
        ]
}
