import Clocks
import StrataSQLite

extension DatabaseWriter {
    /// Watches for commits made by other processes (or other connections) and tells this
    /// writer's observers about them, until the calling task is cancelled.
    ///
    /// SQLite's commit hooks only fire on the connection that commits, so a `@FetchAll` on this
    /// writer never hears of a change another process writes to the same file. Every `interval`
    /// this reads `PRAGMA data_version` on the writer connection, whose value changes exactly
    /// when another connection has committed since the last read, and calls
    /// `DatabaseWriter.notifyChanges(in:)` with the full database when it did.
    ///
    /// ```swift
    /// @Dependency(\.continuousClock) var clock
    /// try await database.pollExternalChanges(every: .milliseconds(500), clock: clock)
    /// ```
    ///
    /// The first tick tells the observers in any case: a commit made elsewhere after they
    /// fetched but before polling read its first `data_version` cannot be told apart from an
    /// older one, and would otherwise stay unseen until the next external commit.
    ///
    /// The clock is a parameter so tests can drive the polling with a test clock.
    ///
    /// - Throws: `CancellationError` when the task is cancelled, or the error of reading the
    ///   pragma.
    public func pollExternalChanges(every interval: Duration, clock: any Clock<Duration>) async throws {
        // The writer connection, always: `data_version` values are only comparable when read on
        // one connection, and a pool's reads may land on any of its readers.
        var lastVersion = try await writeWithoutTransaction { db in try Self.dataVersion(db) }
        var isFirstTick = true
        while true {
            try await clock.sleep(for: interval)
            let version = try await writeWithoutTransaction { db in try Self.dataVersion(db) }
            if version != lastVersion || isFirstTick {
                isFirstTick = false
                lastVersion = version
                notifyChanges(in: .fullDatabase)
            }
        }
    }

    private static func dataVersion(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
    }
}
