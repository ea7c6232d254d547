import PostgresNIO

/// The statements of the change feeds every fetch reads.
extension PreparedStatements {
    /// The owner's database feed: its end, and the zones past `start` (one row without a zone
    /// when none changed).
    struct PrivateDatabaseChanges: PostgresPreparedStatement {
        static let name = "strata_private_database_changes"
        static let sql = """
            SELECT u.database_sequence, z.name, z.deleted FROM strata_cloud.users u
            LEFT JOIN strata_cloud.zones z ON z.owner = u.name AND z.database_change > $2
            WHERE u.name = $1 ORDER BY z.name
            """
        typealias Row = (Int64, String?, Bool?)

        var user: String
        var start: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(user)
            bindings.append(start)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// A zone's position and horizon, when it exists and the user sees it; read before each
    /// page of the zone, it also turns sorting off for the rest of the page's transaction
    /// (``readPagesInFeedOrder``), in the same round trip.
    struct ZoneState: PostgresPreparedStatement {
        static let name = "strata_zone_state"
        static let sql = """
            SELECT sequence, horizon, \(readPagesInFeedOrder) FROM strata_cloud.zones WHERE owner = $1 AND name = $2 AND NOT deleted
            """
        typealias Row = (Int64, Int64, String)

        var owner: String
        var zone: String

        func makeBindings() throws -> PostgresBindings {
            return PostgresBindings.zone(owner: owner, name: zone)
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Turns sorting off for the rest of the transaction, so that a page of a zone is read in
    /// its feed index's order whatever PostgreSQL's statistics believe.
    ///
    /// A page asks for the zone's first `limit` changes after a position. When the statistics
    /// estimate the zone at a few rows (a user they do not know yet, or any user outside the
    /// most common owners of a service with many small ones), PostgreSQL judges that reading
    /// the zone through the primary key and sorting it costs no more than walking the feed
    /// index, and the page then reads every change of the zone after the token: 20,000 rows
    /// for a page of 400, and a first sync's download slowed with the square of its size. The
    /// feed index gives the order a page needs, so with sorting priced out that plan is the
    /// only one left; a sort no plan can avoid is still done. `SET LOCAL`, evaluated once for
    /// the zone's row by ``ZoneState``, which every page reads first: before the page's own
    /// statement is planned, and without a round trip of its own. (A zone with no row has no
    /// page to read: the request fails first.)
    static let readPagesInFeedOrder = "set_config('enable_sort', 'off', true)"

    /// Where a page of a zone's changes starts, and how many rows it reads at most.
    struct ZonePageBounds {
        var owner: String
        var zone: String
        /// Where the records' branch starts: 0 after the user gained access to a shared zone.
        var recordsAfter: Int64
        var tombstonesAfter: Int64
        var limit: Int64

        func makeBindings() -> PostgresBindings {
            var bindings = PostgresBindings.zone(owner: owner, name: zone, capacity: 5)
            bindings.append(recordsAfter)
            bindings.append(tombstonesAfter)
            bindings.append(limit)
            return bindings
        }
    }

    /// Where the pages after the next one start: the position of every `pageSize`-th change
    /// after `after`, for `pages` pages, each only when another change follows it (a page
    /// planned to start at the zone's last change would be empty). Both branches are limited
    /// on their own in their feed index's order, as a page's are, and only positions are read.
    /// The merged changes are limited before they are numbered and counted: a window sees
    /// its level's rows before that level's `LIMIT`. The few rows are not sorted here (the
    /// caller sorts them): with sorting priced out for the page's transaction
    /// (``readPagesInFeedOrder``), a `Sort` node costs 10¹⁰, which set off PostgreSQL's JIT
    /// compilation, 83 ms a page.
    struct PlannedPageStarts: PostgresPreparedStatement {
        static let name = "strata_planned_page_starts"
        static let sql = """
            SELECT sequence FROM (
                SELECT sequence, row_number() OVER (ORDER BY sequence) AS n, count(*) OVER () AS total FROM (
                    SELECT sequence FROM (
                        (SELECT sequence FROM strata_cloud.records WHERE owner = $1 AND zone = $2 AND sequence > $3 AND sequence >= 0
                        ORDER BY sequence LIMIT $4)
                        UNION ALL
                        (SELECT sequence FROM strata_cloud.tombstones WHERE owner = $1 AND zone = $2 AND sequence > $3 AND sequence >= 0
                        ORDER BY sequence LIMIT $4)
                    ) AS merged ORDER BY sequence LIMIT $4
                ) AS changes
            ) AS numbered WHERE n % $5 = 0 AND n < total
            """
        typealias Row = Int64

        var owner: String
        var zone: String
        var after: Int64
        var pageSize: Int64
        var pages: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings.zone(owner: owner, name: zone, capacity: 5)
            bindings.append(after)
            bindings.append(pageSize * pages + 1)
            bindings.append(pageSize)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// A row of a zone's page: its position, name and type; fields, versions, parent and tag
    /// for a save, nil for a deletion.
    typealias ZonePageRow = (Int64, String, String, String?, String?, String?, String?)

    /// A page of a zone's saves and deletions as its owner sees them. Each branch is limited
    /// on its own, in its feed index's order: the page's rows are among each branch's first
    /// `limit`. With the limit only outside, PostgreSQL appended and sorted every remaining
    /// change of the zone for each page (13 ms a page at 10,000 records, so a first sync's
    /// fetch grew with the square of its size).
    struct OwnZonePage: PostgresPreparedStatement {
        static let name = "strata_own_zone_page"
        static let sql = """
            SELECT sequence, name, type, fields, field_versions, parent, change_tag FROM (
                (SELECT sequence, name, type, fields::text, field_versions::text, parent, change_tag
                FROM strata_cloud.records WHERE owner = $1 AND zone = $2 AND sequence > $3 AND sequence >= 0 ORDER BY sequence LIMIT $5)
                UNION ALL
                (SELECT sequence, name, type, NULL, NULL, NULL, NULL
                FROM strata_cloud.tombstones WHERE owner = $1 AND zone = $2 AND sequence > $4 AND sequence >= 0 ORDER BY sequence LIMIT $5)
            ) AS changes ORDER BY sequence LIMIT $5
            """
        typealias Row = ZonePageRow

        var bounds: ZonePageBounds

        func makeBindings() throws -> PostgresBindings { bounds.makeBindings() }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// The page of a zone through the shared database: the saves and deletions row-level
    /// security lets the user see, and the records that left the user's view (departures),
    /// each branch limited on its own.
    struct SharedZonePage: PostgresPreparedStatement {
        static let name = "strata_shared_zone_page"
        static let sql = """
            SELECT sequence, name, type, fields, field_versions, parent, change_tag FROM (
                (SELECT sequence, name, type, fields::text, field_versions::text, parent, change_tag
                FROM strata_cloud.records WHERE owner = $1 AND zone = $2 AND sequence > $3 AND sequence >= 0 ORDER BY sequence LIMIT $5)
                UNION ALL
                (SELECT sequence, name, type, NULL, NULL, NULL, NULL
                FROM strata_cloud.tombstones WHERE owner = $1 AND zone = $2 AND sequence > $4 AND sequence >= 0 ORDER BY sequence LIMIT $5)
                UNION ALL
                (SELECT d.sequence, d.name, d.type, NULL, NULL, NULL, NULL
                FROM strata_cloud.departures d WHERE d.owner = $1 AND d.zone = $2 AND d.sequence > $4 AND d.sequence >= 0
                    AND NOT EXISTS (SELECT 1 FROM strata_cloud.tombstones t WHERE t.owner = $1 AND t.zone = $2 AND t.name = d.name)
                    AND NOT EXISTS (SELECT 1 FROM strata_cloud.records r WHERE r.owner = $1 AND r.zone = $2 AND r.name = d.name)
                ORDER BY d.sequence LIMIT $5)
            ) AS changes ORDER BY sequence LIMIT $5
            """
        typealias Row = ZonePageRow

        var bounds: ZonePageBounds

        func makeBindings() throws -> PostgresBindings { bounds.makeBindings() }
        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}
