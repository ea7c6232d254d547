import CSQLite
import Synchronization

/// Settings of the SQLite library itself, which every connection in the process shares.
///
/// SQLite counts every allocation it makes for `sqlite3_memory_used()` and friends, and
/// takes a process-wide mutex to do it: measured on this project's insert and capture
/// workloads, that mutex was a tenth of all CPU time (`sqlite3_free` and `sqlite3Malloc`
/// under `pthread_mutex_lock`). Strata turns the counting off (`SQLITE_CONFIG_MEMSTATUS`)
/// before the first connection opens. SQLite accepts the setting only before it initializes:
/// when another library in the process used SQLite first, the setting is left as it was.
public enum SQLiteLibrary {
    /// Whether SQLite keeps memory statistics. Set it to true before opening the first
    /// database when the app reads `sqlite3_memory_used()`, `sqlite3_status64()` or sets a
    /// soft or hard heap limit, which need them. Default: false.
    public static var keepsMemoryStatistics: Bool {
        get { memoryStatistics.load(ordering: .acquiring) }
        set { memoryStatistics.store(newValue, ordering: .releasing) }
    }

    private static let memoryStatistics = Atomic<Bool>(false)

    /// Whether the library took Strata's settings (false when SQLite was initialized before
    /// Strata opened its first connection).
    public static var tookSettings: Bool { preparation.tookSettings }

    private static let preparation: (tookSettings: Bool, Void) = {
        (strata_sqlite3_config_memstatus(keepsMemoryStatistics ? 1 : 0) == SQLITE_OK, ())
    }()

    static func prepareOnce() {
        _ = preparation
    }
}
