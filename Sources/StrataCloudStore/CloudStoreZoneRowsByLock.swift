/// Migration 12: a zone's records, tombstones and departures are tied to their zone by the
/// zone's row lock and a trigger, not by foreign keys checked on every row written.
///
/// Each of the three tables had `FOREIGN KEY (owner, zone) REFERENCES zones ON DELETE
/// CASCADE`. PostgreSQL checks such a key with a trigger per inserted row, which runs its own
/// query against `zones` (`SELECT 1 … FOR KEY SHARE`): about 7 µs a record of the 39 µs a
/// modify's write took (`EXPLAIN ANALYZE`, 400 records), all of it under the zone's lock,
/// where a zone's writes run one request at a time (Documentation/Performance.md, issue #27).
/// The check proved nothing the store does not already hold:
///
/// - Every write of the three tables runs under its zone's row lock. A modify and a share's
///   save take it with a statement that finds the zone only when it exists and is not deleted
///   (`LockZone`): a request naming another zone is answered `zoneNotFound` and writes
///   nothing. A deletion acts on the zones it locked only. Accepting and leaving a share take
///   the zone before the share, and a deleted zone has no share left (its deletion removed
///   them under the same lock).
/// - The request role may not delete a zone (migration 5): a deleted zone is marked, and its
///   rows are deleted in the same transaction, under the same lock.
///
/// What the keys did beyond that, this migration keeps with triggers that fire only when a
/// zone's row itself goes or changes its key, which the service never does (an operator, by
/// hand): deleting the row deletes its records, tombstones and departures, as `ON DELETE
/// CASCADE` did, and truncating `zones` (which the shares' key makes `CASCADE`) truncates
/// them too; changing its owner or name while rows refer to it is refused with
/// `foreign_key_violation`, as the keys' `NO ACTION` did. They run as the tables' owner
/// (`SECURITY DEFINER`), as referential actions do, so row-level security does not hide rows
/// from them. Two things raw SQL as the request role could do are no longer refused, and are
/// accepted: an insert naming a zone that was never created (such a row is in no feed), and a
/// participant's insert made beside an operator's uncommitted deletion of the zone's row
/// (which the key made wait, and now outlives the zone). The service does neither, and raw
/// SQL as that role can name any user in `strata.user` anyway.
enum CloudStoreZoneRowsByLock {
    /// The tables whose rows name a zone, in the order they were created.
    static let tables = ["records", "tombstones", "departures"]

    /// ``tables`` as a list of qualified names, for `LOCK` and `TRUNCATE`.
    static var qualifiedTables: String { tables.map { "strata_cloud.\($0)" }.joined(separator: ", ") }

    static var statements: [String] {
        // Zones first, in the order requests take them (see CloudStoreOwnerFirstPolicies):
        // dropping a key locks both its tables.
        [
            "LOCK TABLE strata_cloud.zones, \(qualifiedTables) IN ACCESS EXCLUSIVE MODE",
            """
            CREATE FUNCTION strata_cloud.zone_rows_follow_zone() RETURNS trigger
            LANGUAGE plpgsql SECURITY DEFINER SET search_path = '' AS $$
            BEGIN
                IF TG_OP = 'TRUNCATE' THEN
                    TRUNCATE \(qualifiedTables);
                    RETURN NULL;
                END IF;
                IF TG_OP = 'DELETE' THEN
                    \(tables.map { "DELETE FROM strata_cloud.\($0) WHERE owner = OLD.owner AND zone = OLD.name;" }.joined(separator: "\n            "))
                    RETURN OLD;
                END IF;
                IF \(tables.map { "EXISTS (SELECT 1 FROM strata_cloud.\($0) WHERE owner = OLD.owner AND zone = OLD.name)" }.joined(separator: " OR ")) THEN
                    RAISE EXCEPTION 'strata: zone "%" of "%" still has rows: its owner and name cannot change', OLD.name, OLD.owner
                        USING ERRCODE = '23503';
                END IF;
                RETURN NEW;
            END
            $$
            """,
            "REVOKE ALL ON FUNCTION strata_cloud.zone_rows_follow_zone() FROM PUBLIC, \(CloudStoreMigrations.requestRole)",
            """
            CREATE TRIGGER zones_rows_follow AFTER DELETE ON strata_cloud.zones
            FOR EACH ROW EXECUTE FUNCTION strata_cloud.zone_rows_follow_zone()
            """,
            """
            CREATE TRIGGER zones_rows_follow_truncate AFTER TRUNCATE ON strata_cloud.zones
            FOR EACH STATEMENT EXECUTE FUNCTION strata_cloud.zone_rows_follow_zone()
            """,
            """
            CREATE TRIGGER zones_key_kept AFTER UPDATE OF owner, name ON strata_cloud.zones
            FOR EACH ROW WHEN (OLD.owner IS DISTINCT FROM NEW.owner OR OLD.name IS DISTINCT FROM NEW.name)
            EXECUTE FUNCTION strata_cloud.zone_rows_follow_zone()
            """,
        ]
            // The names PostgreSQL gave the keys when migrations 1 and 2 created the tables: a
            // key under another name fails the migration rather than staying unnoticed.
            + tables.map { "ALTER TABLE strata_cloud.\($0) DROP CONSTRAINT \($0)_owner_zone_fkey" }
    }
}
