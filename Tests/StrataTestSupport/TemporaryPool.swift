import Foundation
import StrataSQLite

/// A pool on a fresh temporary file (WAL, so readers run beside the writer), closed and
/// removed when released.
package final class TemporaryPool: Sendable {
    package let directory: URL
    package let pool: DatabasePool

    /// Opens the pool and runs `schema` (any number of statements) on its writer.
    package init(configuration: Configuration = Configuration(), schema: String = "") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        pool = try DatabasePool(path: directory.appendingPathComponent("db.sqlite").path, configuration: configuration)
        if !schema.isEmpty {
            try pool.write { db in try db.execute(sql: schema) }
        }
    }

    /// The path of the pool's database file, for opening a second connection to it.
    package var path: String { directory.appendingPathComponent("db.sqlite").path }

    deinit {
        pool.close()
        try? FileManager.default.removeItem(at: directory)
    }
}
