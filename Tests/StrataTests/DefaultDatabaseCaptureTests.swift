import Dependencies
import Foundation
import Strata
import StrataTestSupport
import Testing

/// Connections of the default database can write files whose sync engine runs in another
/// process: they carry the capture triggers' functions.
@Suite(.timeLimit(.minutes(1))) struct DefaultDatabaseCaptureTests {
    @Test func everyWritingConnectionHasTheCaptureFunctions() async throws {
        let context = withDependencies {
            $0.context = .test
        } operation: {
            DependencyValues._current
        }
        let database = try await runOnBackgroundThread {
            try withDependencies {
                $0 = context
            } operation: {
                try defaultDatabase()
            }
        }
        let values = try await database.write { db in
            try String.fetchOne(
                db,
                sql:
                    "SELECT quote(strata_sync_is_synchronizing()) || ' ' || quote(strata_sync_version()) || ' ' || quote(strata_sync_transaction())"
            )
        }
        // No change logged in this transaction yet: no number, no version.
        #expect(values == "0 NULL NULL")
    }
}
