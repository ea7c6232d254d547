/// Migration 13: PostgreSQL gathers no statistics of the records' fields and versions, nor of
/// the versions a tombstone keeps.
///
/// Those `jsonb` columns are payload: no statement of the store filters, joins, groups or
/// sorts on them (a tombstone's versions are tested for `NULL` only after its row was found by
/// its key). Their statistics served no plan, and gathering them was most of every `ANALYZE` of
/// the table: the sample's values are detoasted and sorted with `jsonb`'s comparison, one per
/// row sampled, to find common values that a record's sealed fields never have. Autovacuum
/// runs that `ANALYZE` each time a tenth of a table changed, so a first sync of many rows
/// paid for it in the middle of its download: a third of the machine for half a second at
/// 30,000 rows (`perf`, Documentation/Performance.md), on the same cores as the requests.
/// Measured on 30,000 sealed records: `ANALYZE` of the table took 445–473 ms with them, 137 ms
/// without.
///
/// `SET STATISTICS 0` keeps the columns out of `ANALYZE`; it takes `SHARE UPDATE EXCLUSIVE`,
/// which requests' reads and writes do not conflict with, and rewrites nothing. Statistics a
/// database gathered before the migration stay as they were, never refreshed: `ANALYZE` skips
/// the columns without deleting what it wrote earlier, and only a superuser could. No plan
/// reads them (`OutsidePayloadStatisticsTests` compares the store's plans with and without).
enum CloudStorePayloadStatistics {
    /// The payload columns, by table.
    static let columns: [(table: String, column: String)] = [
        ("records", "fields"), ("records", "field_versions"), ("tombstones", "field_versions"),
    ]

    static var statements: [String] {
        Dictionary(grouping: columns, by: \.table).sorted { $0.key < $1.key }.map { table, columns in
            "ALTER TABLE strata_cloud.\(table) "
                + columns.map { "ALTER COLUMN \($0.column) SET STATISTICS 0" }.joined(separator: ", ")
        }
    }
}
