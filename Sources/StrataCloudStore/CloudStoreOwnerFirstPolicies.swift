/// Migration 11: each protected table's row-level security as one policy per command, which
/// asks whether the request user owns the row before it asks which shares they see.
///
/// The tables had an owner policy (`FOR ALL`) and, beside it, participants' policies that look
/// the user's shares up through `readable_shares()`, `writable_shares()` or `asset_peers()`.
/// PostgreSQL joins permissive policies with `OR` in an order of its own, and put the
/// participants' first: every statement of an owner ran the share functions to build their
/// hashed lists before it compared the owner (`EXPLAIN ANALYZE`: two function scans of
/// 0.05–0.15 ms each on the zone's lock, two on a modify's write, one on each feed query;
/// about 0.8 ms of a push's PostgreSQL time, issue #27). Within one policy's expression the
/// order is the one written, and `OR` stops at its first true operand: an owner's rows never
/// run a share function. What each command lets through is unchanged: the owner's condition
/// `OR` the participants' condition of the same command, as PostgreSQL combined them.
enum CloudStoreOwnerFirstPolicies {
    static let me = CloudStoreMigrations.isRequestUser

    /// A table's policies of migration 11: a participant's condition for each command, nil
    /// where only the owner may.
    struct Table {
        var name: String
        var read: String?
        var insert: String?
        var update: String?
        var delete: String?
        /// The policies it replaces.
        var replaced: [String]
    }

    static var tables: [Table] {
        let readable = "SELECT * FROM strata_cloud.readable_shares()"
        let writable = "SELECT * FROM strata_cloud.writable_shares()"
        let readableZones = "SELECT owner, zone FROM strata_cloud.readable_shares()"
        let writableZones = "SELECT owner, zone FROM strata_cloud.writable_shares()"
        let participants = ["participant_read", "participant_insert", "participant_update", "participant_delete"]
        return [
            Table(
                name: "records",
                read: "(owner, zone, share_root) IN (\(readable))",
                insert: "(owner, zone, share_root) IN (\(writable))",
                update: "(owner, zone, share_root) IN (\(writable))",
                delete: "(owner, zone, share_root) IN (\(writable))",
                replaced: ["owner"] + participants),
            Table(
                name: "zones",
                read: "(owner, name) IN (\(readableZones))",
                update: "(owner, name) IN (\(writableZones))",
                replaced: ["owner", "participant_read", "participant_update"]),
        ]
            + ["tombstones", "departures"].map { table in
                Table(
                    name: table,
                    read: "\(me) = ANY(audience) AND (owner, zone) IN (\(readableZones))",
                    insert: "(owner, zone) IN (\(writableZones))",
                    update: "(owner, zone) IN (\(writableZones))",
                    delete: "(owner, zone) IN (\(writableZones))",
                    replaced: ["owner"] + participants)
            }
            + ["shares", "share_participants"].map { table in
                Table(name: table, read: "(owner, zone, root) IN (\(readable))", replaced: ["owner", "participant_read"])
            }
            + ["assets", "asset_chunks"].map { table in
                Table(name: table, read: "owner IN (SELECT strata_cloud.asset_peers())", replaced: ["owner", "peer_read"])
            }
    }

    /// The owner's condition first, then the participants' (when they have one).
    static func condition(_ participant: String?) -> String {
        guard let participant else { return "owner = \(me)" }
        return "owner = \(me) OR (\(participant))"
    }

    static var statements: [String] {
        // Every table first, in the order requests take them: a modify locks its zone's row
        // and then reads the records. Dropping and creating policies one table after another
        // took `records` before `zones`; a migration run beside serving instances then
        // deadlocked with a writer holding its zone (PostgreSQL failing one of them, 40P01).
        [
            """
            LOCK TABLE strata_cloud.zones, strata_cloud.records, strata_cloud.tombstones, strata_cloud.departures,
                strata_cloud.shares, strata_cloud.share_participants, strata_cloud.assets, strata_cloud.asset_chunks,
                strata_cloud.user_profiles IN ACCESS EXCLUSIVE MODE
            """
        ]
            + tables.flatMap { table in
                let qualified = "strata_cloud.\(table.name)"
                return table.replaced.map { "DROP POLICY \($0) ON \(qualified)" } + [
                    "CREATE POLICY member_read ON \(qualified) FOR SELECT USING (\(condition(table.read)))",
                    "CREATE POLICY member_insert ON \(qualified) FOR INSERT WITH CHECK (\(condition(table.insert)))",
                    """
                    CREATE POLICY member_update ON \(qualified) FOR UPDATE
                        USING (\(condition(table.update))) WITH CHECK (\(condition(table.update)))
                    """,
                    "CREATE POLICY member_delete ON \(qualified) FOR DELETE USING (\(condition(table.delete)))",
                ]
            } + [
                // Profiles: their owner reads them, and so do the peers `profile_peers()` lists.
                "DROP POLICY owner_reads ON strata_cloud.user_profiles",
                "DROP POLICY peer_reads ON strata_cloud.user_profiles",
                """
                CREATE POLICY member_reads ON strata_cloud.user_profiles FOR SELECT
                    USING (\(condition("owner IN (SELECT strata_cloud.profile_peers())")))
                """,
            ]
    }
}
