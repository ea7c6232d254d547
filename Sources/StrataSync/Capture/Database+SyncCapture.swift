import Foundation
import StrataSQLite

extension Database {
    /// Lets this connection write a file that a sync engine captures: adds the SQL functions
    /// the capture triggers call.
    ///
    /// The triggers that log local changes for sync live in the database file, so they fire
    /// for every connection that writes it: in another process (a command-line tool, an app
    /// extension) as in the app. Each such connection needs these functions; without them, a
    /// write to a synced table fails with `no such function` (a capture function such as `strata_sync_is_synchronizing`)
    /// and changes nothing, so no write escapes sync unnoticed. `defaultDatabase()` adds them
    /// to every connection it opens; the sync engine adds its own to its writer. Call it in
    /// `prepareDatabase` when you open the file yourself:
    ///
    /// ```swift
    /// var configuration = Configuration()
    /// configuration.prepareDatabase { db in
    ///     if db.role.canWrite { try db.addSyncCaptureFunctions() }
    /// }
    /// let database = try DatabaseQueue(path: path, configuration: configuration)
    /// ```
    ///
    /// Changes written here are versioned by this connection's own clock, continued from the
    /// last change logged in the file and from the newest version the device's engine has
    /// received, and the engine sends them at its next sync. Migrations applied on this
    /// connection take the capture triggers down and build them again around each migration,
    /// so a migration may drop or rename a synced table's columns.
    public func addSyncCaptureFunctions() throws {
        let clock = HybridLogicalClock(node: "local") { Int64((Date().timeIntervalSince1970 * 1_000).rounded(.down)) }
        try CaptureFunctions.install(on: self, session: CaptureSession(clock: clock))
    }
}
