import Foundation

/// A fresh folder under the temporary directory, for database files and exports.
///
/// It is removed by ``remove()`` or, failing that, when released. Call `remove()` in a `defer`
/// when a database lives inside: that keeps the folder until the end of the scope, where a
/// release could come as soon as the last use of the variable.
package final class TemporaryDirectory: Sendable {
    package let url: URL

    package init(prefix: String = "strata-tests") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        remove()
    }

    /// The path of `name` inside the folder (the file itself is not created).
    package func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    /// A database path inside the folder, for tests that need one file.
    package var databasePath: String { path("db.sqlite") }

    /// Removes the folder and everything in it. Harmless when already removed.
    package func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
