import IssueReporting
import StrataSQLite
import Synchronization

/// The live database files this process has open through ``defaultDatabase(path:configuration:)``.
///
/// Two pools on one file would each serialize their own writes only, and neither's observers
/// would see the other's commits; an app that bootstraps twice almost always means to reuse the
/// first. The registry holds pools weakly: once a pool is released its file may be opened again.
final class LiveDatabaseRegistry: Sendable {
    static let shared = LiveDatabaseRegistry()

    private struct Entry {
        weak var writer: (any DatabaseWriter)?
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// The pool open at `path`, after reporting the second bootstrap, or a new one from `open`.
    func open(path: String, _ open: () throws -> any DatabaseWriter) throws -> any DatabaseWriter {
        // Opening under the lock keeps two threads bootstrapping at once from both opening.
        let (writer, isSecondBootstrap) = try entries.withLock { entries in
            if let writer = entries[path]?.writer { return (writer, true) }
            let writer = try open()
            entries[path] = Entry(writer: writer)
            return (writer, false)
        }
        if isSecondBootstrap {
            reportIssue(
                """
                The live database at \(path) was bootstrapped a second time in this process. \
                The pool opened first is returned instead of opening a second one on the same file. \
                Bootstrap once, in prepareDependencies at the app's entry point, and read \
                @Dependency(\\.defaultDatabase) everywhere else.
                """)
        }
        return writer
    }
}
