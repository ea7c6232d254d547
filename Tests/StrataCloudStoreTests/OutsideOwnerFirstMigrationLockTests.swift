import Foundation
import Testing

@testable import StrataCloudStore

/// Migration 11 takes an ACCESS EXCLUSIVE lock on every table whose policies it replaces
/// (DROP and CREATE POLICY lock the table). Every modify takes its zone's row first and reads
/// `records` next. Run beside serving instances (`strata-cloud migrate` during a rolling
/// deploy), a migration that took `records` while a writer held its zone would wait for
/// `zones` while the writer waited for `records`: PostgreSQL breaks such a cycle after
/// `deadlock_timeout` by failing one of them (40P01), a failed migrate or a failed request.
/// Taking the locks in the requests' order, zones first, makes the migration wait for the
/// writer instead. (An outside tester found it; replaying it against the shared test database
/// held its tables for a second and failed other suites' requests, so the order is checked
/// here as the statements give it.)
@Suite struct OutsideOwnerFirstMigrationLockTests {
    /// The tables migration 11's statements lock, in the order they first lock them.
    static var migrationLockOrder: [String] {
        var order: [String] = []
        let pattern = #/strata_cloud\.([a-z_]+)/#
        for statement in CloudStoreOwnerFirstPolicies.statements {
            let trimmed = statement.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
            guard trimmed.hasPrefix("DROP POLICY") || trimmed.hasPrefix("CREATE POLICY") || trimmed.hasPrefix("LOCK TABLE") else {
                continue
            }
            // A policy's expression names other objects (functions); its table is the first name.
            let names = statement.matches(of: pattern).map { String($0.output.1) }
            let locked = trimmed.hasPrefix("LOCK TABLE") ? names : Array(names.prefix(1))
            for name in locked where !order.contains(name) { order.append(name) }
        }
        return order
    }

    @Test func migration11LocksTheZonesBeforeAnyOtherTable() {
        let order = Self.migrationLockOrder
        #expect(order.first == "zones", "\(order)")
        #expect(order.dropFirst().first == "records", "\(order)")
        // Every table a policy statement touches is in the first statement's lock.
        let first = CloudStoreOwnerFirstPolicies.statements.first ?? ""
        #expect(first.uppercased().hasPrefix("LOCK TABLE"))
        for table in order { #expect(first.contains("strata_cloud.\(table),") || first.contains("strata_cloud.\(table) IN"), "\(table)") }
    }
}
