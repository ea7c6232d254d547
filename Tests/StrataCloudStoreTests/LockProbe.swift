import PostgresNIO
import StrataCloud

/// Asks for rows without waiting: whether another transaction holds them.
enum LockProbe {
    /// Locks `zone`'s row: waiting for it, or failing at once with `nowait`.
    static func zoneRow(_ zone: CloudZoneID, nowait: Bool = false) -> PostgresQuery {
        nowait
            ? "SELECT 1 FROM strata_cloud.zones WHERE owner = \(zone.owner) AND name = \(zone.name) FOR UPDATE NOWAIT"
            : "SELECT 1 FROM strata_cloud.zones WHERE owner = \(zone.owner) AND name = \(zone.name) FOR UPDATE"
    }

    /// Whether `query`, a `FOR UPDATE NOWAIT`, gets its rows at once; false when another
    /// transaction holds one (`55P03`, lock not available).
    static func canLock(_ query: PostgresQuery, in fixture: StoreFixture) async throws -> Bool {
        try await fixture.client.withConnection { connection in
            try await connection.query("BEGIN", logger: fixture.logger)
            do {
                // The lock's failure arrives with the rows: a sequence left unread drops it.
                for try await _ in try await connection.query(query, logger: fixture.logger) {}
                try await connection.query("ROLLBACK", logger: fixture.logger)
                return true
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" {
                try await connection.query("ROLLBACK", logger: fixture.logger)
                return false
            }
        }
    }
}
