import Foundation

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
    private var entries: [SQLKey: Entry] = [:]
    private var clock: UInt64 = 0
    private(set) var evictionCount = 0

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    var count: Int { entries.count }

    mutating func statement(for sql: String) -> Statement? {
        guard let index = entries.index(forKey: SQLKey(sql)) else { return nil }
        clock &+= 1
        entries.values[index].lastUse = clock
        return entries.values[index].statement
    }

    mutating func insert(_ statement: Statement, for sql: String) {
        guard capacity > 0 else { return }
        let key = SQLKey(sql)
        if entries.count >= capacity, entries[key] == nil {
            var oldestKey: SQLKey?
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
        entries[key] = Entry(statement: statement, lastUse: clock)
    }

    mutating func removeAll() {
        entries.removeAll()
    }
}

/// SQL text as a cache key, hashed on a sample of its bytes: its length, its first and last 32
/// bytes and 32 bytes spread between them. Equality compares every byte.
///
/// Hashing the whole text was most of a cache hit: the engine's statements run to a kilobyte,
/// and each lookup hashed every byte (a tenth of applying a page of records). Texts that
/// share length and sample only share a bucket chain, at most the cache's capacity long.
struct SQLKey: Hashable {
    let sql: String

    init(_ sql: String) { self.sql = sql }

    /// Byte for byte, not `String`'s `==`, which takes canonically equivalent texts for equal
    /// (`'é'` written as one scalar or as `e` and a combining accent): to SQLite they are
    /// different statements, with different literals and identifiers.
    static func == (lhs: SQLKey, rhs: SQLKey) -> Bool {
        var (left, right) = (lhs.sql, rhs.sql)
        return left.withUTF8 { leftBytes in
            right.withUTF8 { rightBytes in
                guard leftBytes.count == rightBytes.count else { return false }
                guard let leftStart = leftBytes.baseAddress, let rightStart = rightBytes.baseAddress else { return true }
                return memcmp(leftStart, rightStart, leftBytes.count) == 0
            }
        }
    }

    func hash(into hasher: inout Hasher) {
        // Native text is not copied; any other is made contiguous first, so equal texts
        // always hash alike.
        var text = sql
        text.withUTF8 { bytes in
            hasher.combine(bytes.count)
            let edge = 32
            guard bytes.count > 3 * edge else {
                hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
                return
            }
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[..<edge])))
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[(bytes.count - edge)...])))
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: edge) { sample in
                let step = (bytes.count - 2 * edge) / edge
                for index in 0..<edge { sample[index] = bytes[edge + index * step] }
                hasher.combine(bytes: UnsafeRawBufferPointer(sample))
            }
        }
    }
}
