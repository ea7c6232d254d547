/// A bounded least-recently-used cache of prepared statements, keyed by SQL text.
///
/// Capacity is small (64 by default) so eviction scans for the oldest entry instead of keeping
/// a linked list: the scan only happens on a miss when the cache is full, and a miss already
/// pays for `sqlite3_prepare`, which costs far more than comparing 64 integers.
struct StatementCache {
    private struct Entry {
        var statement: Statement
        var lastUse: UInt64
    }

    let capacity: Int
    private var entries: [String: Entry] = [:]
    private var clock: UInt64 = 0
    private(set) var evictionCount = 0

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    var count: Int { entries.count }

    mutating func statement(for sql: String) -> Statement? {
        guard let entry = entries[sql] else { return nil }
        clock &+= 1
        entries[sql]?.lastUse = clock
        return entry.statement
    }

    mutating func insert(_ statement: Statement, for sql: String) {
        guard capacity > 0 else { return }
        if entries.count >= capacity, entries[sql] == nil {
            var oldestKey: String?
            var oldestUse = UInt64.max
            for (key, entry) in entries where entry.lastUse < oldestUse && !entry.statement.isBusy {
                oldestKey = key
                oldestUse = entry.lastUse
            }
            if let oldestKey {
                entries[oldestKey] = nil
                evictionCount += 1
            }
        }
        clock &+= 1
        entries[sql] = Entry(statement: statement, lastUse: clock)
    }

    mutating func removeAll() {
        entries.removeAll()
    }
}
