/// Migration 2: shares, participants, and the row-level security that lets an accepted
/// participant reach the shared records of another user's zone, and nothing else of it.
///
/// Every record carries `share_root`, the shared root it is under (the first record with a
/// share on its parent chain, itself included), kept by the store as records are saved, moved,
/// shared and unshared. The policies then need no recursion: a record is readable when
/// `(owner, zone, share_root)` is one of the request user's accepted shares.
///
/// Membership lookups run in `SECURITY DEFINER` functions with an empty search path: a policy
/// on `share_participants` that read `share_participants` itself would recurse, and the
/// functions are the only way a request role reads other users' participation. Each policy
/// calls them once per query in an uncorrelated sub-select, so a record check is one hash probe.
enum CloudStoreSharingSchema {
    static let me = CloudStoreMigrations.isRequestUser
    static let role = CloudStoreMigrations.requestRole

    static let statements: [String] = tables + functions + [departuresFunction] + policies + grants

    static let tables: [String] = [
        "ALTER TABLE strata_cloud.records ADD COLUMN share_root text",
        "CREATE INDEX records_share_root ON strata_cloud.records (owner, zone, share_root) WHERE share_root IS NOT NULL",
        """
        CREATE TABLE strata_cloud.shares (
            owner text NOT NULL,
            zone text NOT NULL,
            root text NOT NULL,
            title text,
            public_permission text NOT NULL CHECK (public_permission IN ('none', 'readOnly', 'readWrite')),
            change_tag text NOT NULL,
            PRIMARY KEY (owner, zone, root),
            FOREIGN KEY (owner, zone) REFERENCES strata_cloud.zones (owner, name) ON DELETE CASCADE)
        """,
        """
        CREATE TABLE strata_cloud.share_participants (
            owner text NOT NULL,
            zone text NOT NULL,
            root text NOT NULL,
            participant text NOT NULL,
            role text NOT NULL CHECK (role IN ('owner', 'privateUser', 'publicUser')),
            permission text NOT NULL CHECK (permission IN ('none', 'readOnly', 'readWrite')),
            acceptance text NOT NULL CHECK (acceptance IN ('pending', 'accepted', 'removed')),
            access_changed bigint NOT NULL DEFAULT 0,
            position integer NOT NULL,
            PRIMARY KEY (owner, zone, root, participant),
            FOREIGN KEY (owner, zone, root) REFERENCES strata_cloud.shares (owner, zone, root) ON DELETE CASCADE)
        """,
        "CREATE INDEX share_participants_by_user ON strata_cloud.share_participants (participant) WHERE acceptance = 'accepted'",
        """
        CREATE TABLE strata_cloud.departures (
            owner text NOT NULL,
            zone text NOT NULL,
            name text NOT NULL,
            type text NOT NULL,
            sequence bigint NOT NULL,
            audience text[] NOT NULL,
            PRIMARY KEY (owner, zone, name),
            FOREIGN KEY (owner, zone) REFERENCES strata_cloud.zones (owner, name) ON DELETE CASCADE)
        """,
        "CREATE INDEX departures_feed ON strata_cloud.departures (owner, zone, sequence)",
    ]

    static let functions: [String] = [
        // The shares the request user accepted with at least read access: owner, zone, root.
        """
        CREATE FUNCTION strata_cloud.readable_shares() RETURNS TABLE (owner text, zone text, root text)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
            SELECT p.owner, p.zone, p.root FROM strata_cloud.share_participants p
            WHERE p.participant = current_setting('strata.user', true) AND p.acceptance = 'accepted'
                AND p.permission <> 'none' AND p.owner <> p.participant
        $$
        """,
        """
        CREATE FUNCTION strata_cloud.writable_shares() RETURNS TABLE (owner text, zone text, root text)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
            SELECT p.owner, p.zone, p.root FROM strata_cloud.share_participants p
            WHERE p.participant = current_setting('strata.user', true) AND p.acceptance = 'accepted'
                AND p.permission = 'readWrite' AND p.owner <> p.participant
        $$
        """,
        // Users whose assets the request user may read: owners of shares they accepted, and
        // accepted participants of their own shares (a participant's upload serves the owner).
        """
        CREATE FUNCTION strata_cloud.asset_peers() RETURNS SETOF text
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = '' AS $$
            SELECT p.owner FROM strata_cloud.share_participants p
            WHERE p.participant = current_setting('strata.user', true) AND p.acceptance = 'accepted'
            UNION
            SELECT p.participant FROM strata_cloud.share_participants p
            WHERE p.owner = current_setting('strata.user', true) AND p.acceptance = 'accepted'
        $$
        """,
        // Moves the owner's database feed past a change to `zones`: the owner, or a participant
        // who may write one of the zones' shares, may. The user row's lock orders positions by
        // commit.
        """
        CREATE FUNCTION strata_cloud.mark_database_change(p_owner text, p_zones text[]) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
        DECLARE
            me text := current_setting('strata.user', true);
            v_position bigint;
        BEGIN
            IF me IS DISTINCT FROM p_owner AND EXISTS (
                SELECT 1 FROM unnest(p_zones) AS z(name) WHERE NOT EXISTS (
                    SELECT 1 FROM strata_cloud.share_participants p
                    WHERE p.owner = p_owner AND p.zone = z.name AND p.participant = me
                        AND p.acceptance = 'accepted' AND p.permission = 'readWrite'))
            THEN
                RAISE EXCEPTION 'strata: % may not change zones of %', me, p_owner USING ERRCODE = '42501';
            END IF;
            UPDATE strata_cloud.users SET database_sequence = database_sequence + 1 WHERE name = p_owner
                RETURNING database_sequence INTO v_position;
            UPDATE strata_cloud.zones SET database_change = v_position WHERE owner = p_owner AND name = ANY(p_zones);
        END
        $$
        """,
        // Tells every service instance (LISTEN strata_cloud) who can see a changed zone: its
        // owner and everyone on one of its shares, plus `p_extra` (participants just removed).
        // The payload is a JSON array of users, or "*" when it would not fit a notification.
        """
        CREATE FUNCTION strata_cloud.notify_zone_change(p_owner text, p_zone text, p_extra text[]) RETURNS void
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
        DECLARE
            payload text;
        BEGIN
            SELECT json_agg(DISTINCT u)::text INTO payload FROM (
                SELECT p_owner AS u
                UNION SELECT p.participant FROM strata_cloud.share_participants p WHERE p.owner = p_owner AND p.zone = p_zone
                UNION SELECT unnest(p_extra)) AS users;
            IF octet_length(payload) > 7000 THEN payload := '*'; END IF;
            PERFORM pg_notify('strata_cloud', payload);
        END
        $$
        """,
        // The records of a zone under `p_name` (itself included) that share its current
        // share root: a nested share's subtree keeps its own root.
        """
        CREATE FUNCTION strata_cloud.share_subtree(p_owner text, p_zone text, p_name text) RETURNS TABLE (name text, type text)
        LANGUAGE sql STABLE AS $$
            WITH RECURSIVE subtree (name, type) AS (
                SELECT r.name, r.type FROM strata_cloud.records r WHERE r.owner = p_owner AND r.zone = p_zone AND r.name = p_name
                UNION
                SELECT r.name, r.type FROM strata_cloud.records r JOIN subtree s ON r.parent = s.name
                WHERE r.owner = p_owner AND r.zone = p_zone AND NOT EXISTS (
                    SELECT 1 FROM strata_cloud.shares sh WHERE sh.owner = p_owner AND sh.zone = p_zone AND sh.root = r.name))
            SELECT name, type FROM subtree
        $$
        """,
        // Accepts a share for the request user: an invited participant, or anyone when the
        // share is public. Runs as the schema's owner because a public user is on no list yet;
        // the zone's next position marks when their access began, so their feed restarts.
        // The text migration 9 writes over the earlier version (which locked the share
        // before the zone): a new database has it from the start.
        CloudStoreLockOrderSchema.acceptShare,
        // A participant leaves a share, for themselves only. The text migration 9 writes over
        // the earlier version (which read the share before taking the zone): a new database
        // has it from the start.
        CloudStoreLockOrderSchema.leaveShare,
    ]

    /// Marks the records under a shared root (``functions``' `share_subtree`) as gone from
    /// the feeds of `p_audience`, at the zone positions after `p_position`; returns the last
    /// position used. The records stay in the zone: this is how a participant removed from a
    /// share, or a share that ended, hears that its records left.
    static let departuresFunction = """
        CREATE FUNCTION strata_cloud.record_departures(p_owner text, p_zone text, p_root text, p_audience text[], p_position bigint)
        RETURNS bigint LANGUAGE plpgsql AS $$
        DECLARE
            audience text[] := array(SELECT DISTINCT u FROM unnest(p_audience) AS a(u) WHERE u <> p_owner);
            v_position bigint := p_position;
        BEGIN
            IF cardinality(audience) = 0 THEN RETURN v_position; END IF;
            INSERT INTO strata_cloud.departures AS d (owner, zone, name, type, sequence, audience)
            SELECT p_owner, p_zone, s.name, s.type, p_position + row_number() OVER (ORDER BY s.name), audience
            FROM strata_cloud.share_subtree(p_owner, p_zone, p_root) s
            ON CONFLICT (owner, zone, name) DO UPDATE SET type = excluded.type, sequence = excluded.sequence,
                audience = array(SELECT DISTINCT u FROM unnest(d.audience || excluded.audience) AS a(u));
            GET DIAGNOSTICS v_position = ROW_COUNT;
            RETURN p_position + v_position;
        END
        $$
        """

    static var policies: [String] {
        let readable = "SELECT * FROM strata_cloud.readable_shares()"
        let writable = "SELECT * FROM strata_cloud.writable_shares()"
        let readableZones = "SELECT owner, zone FROM strata_cloud.readable_shares()"
        let writableZones = "SELECT owner, zone FROM strata_cloud.writable_shares()"
        return [
            "CREATE POLICY participant_read ON strata_cloud.records FOR SELECT USING ((owner, zone, share_root) IN (\(readable)))",
            "CREATE POLICY participant_insert ON strata_cloud.records FOR INSERT WITH CHECK ((owner, zone, share_root) IN (\(writable)))",
            """
            CREATE POLICY participant_update ON strata_cloud.records FOR UPDATE
                USING ((owner, zone, share_root) IN (\(writable))) WITH CHECK ((owner, zone, share_root) IN (\(writable)))
            """,
            "CREATE POLICY participant_delete ON strata_cloud.records FOR DELETE USING ((owner, zone, share_root) IN (\(writable)))",

            "CREATE POLICY participant_read ON strata_cloud.zones FOR SELECT USING ((owner, name) IN (\(readableZones)))",
            """
            CREATE POLICY participant_update ON strata_cloud.zones FOR UPDATE
                USING ((owner, name) IN (\(writableZones))) WITH CHECK ((owner, name) IN (\(writableZones)))
            """,
        ]
            + ["tombstones", "departures"].flatMap { table in
                [
                    """
                    CREATE POLICY participant_read ON strata_cloud.\(table) FOR SELECT
                        USING (\(me) = ANY(audience) AND (owner, zone) IN (\(readableZones)))
                    """,
                    "CREATE POLICY participant_insert ON strata_cloud.\(table) FOR INSERT WITH CHECK ((owner, zone) IN (\(writableZones)))",
                    """
                    CREATE POLICY participant_update ON strata_cloud.\(table) FOR UPDATE
                        USING ((owner, zone) IN (\(writableZones))) WITH CHECK ((owner, zone) IN (\(writableZones)))
                    """,
                    "CREATE POLICY participant_delete ON strata_cloud.\(table) FOR DELETE USING ((owner, zone) IN (\(writableZones)))",
                ]
            } + [
                "ALTER TABLE strata_cloud.departures ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY owner ON strata_cloud.departures USING (owner = \(me)) WITH CHECK (owner = \(me))",
            ]
            + ["shares", "share_participants"].flatMap { table in
                [
                    "ALTER TABLE strata_cloud.\(table) ENABLE ROW LEVEL SECURITY",
                    "CREATE POLICY owner ON strata_cloud.\(table) USING (owner = \(me)) WITH CHECK (owner = \(me))",
                    "CREATE POLICY participant_read ON strata_cloud.\(table) FOR SELECT USING ((owner, zone, root) IN (\(readable)))",
                ]
            }
            + ["assets", "asset_chunks"].map { table in
                "CREATE POLICY peer_read ON strata_cloud.\(table) FOR SELECT USING (owner IN (SELECT strata_cloud.asset_peers()))"
            }
    }

    static let grants: [String] = [
        """
        GRANT SELECT, INSERT, UPDATE, DELETE ON strata_cloud.shares, strata_cloud.share_participants,
            strata_cloud.departures TO \(role)
        """,
        "REVOKE ALL ON ALL FUNCTIONS IN SCHEMA strata_cloud FROM PUBLIC",
        "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA strata_cloud TO \(role)",
    ]
}
