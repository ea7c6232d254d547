import Foundation

/// A bounded least-recently-used cache of prepared statements, keyed by SQL text.
///
/// Capacity is small (64 by default) so eviction scans for the oldest entry instead of keeping
/// a linked list: the scan only happens on a miss when the cache is full, and a miss already
/// pays for `sqlite3_prepare`, which costs far more than comparing 64 integers.
struct StatementCache {
    /// A cached statement; a class, so that ``recent`` can hold it and mark its use without a
    /// lookup.
    private final class Entry {
        let statement: Statement
        var lastUse: UInt64
        /// The text it was cached for, kept here so that its bytes stay where ``identity``
        /// says while the entry is cached. (Not the dictionary's key: a key replaced keeps the
        /// text it was first inserted with.)
        let sql: String
        let identity: TextIdentity?

        init(statement: Statement, lastUse: UInt64, sql: String) {
            self.statement = statement
            self.lastUse = lastUse
            self.sql = sql
            identity = TextIdentity(sql)
        }
    }

    let capacity: Int
    private var entries: [SQLKey: Entry] = [:]
    /// Up to ``recentCapacity`` entries found lately, by their text's ``TextIdentity``, each
    /// replacing the oldest in turn (only a lookup with the very bytes an entry keeps takes a
    /// slot, so the entry's own text holds them where the slot says). The sync
    /// engine runs the same dozen or two statements once a record, their SQL constant strings
    /// whose bytes never move: two integer comparisons a slot find one here, where the
    /// dictionary hashed a sample of the text and compared every byte of it (up to a kilobyte)
    /// at every execution. Eight slots missed half the time while applying fetched records.
    private var recent: [Entry] = []
    private var nextRecentSlot = 0
    static let recentCapacity = 32
    private var clock: UInt64 = 0
    private(set) var evictionCount = 0

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    var count: Int { entries.count }

    mutating func statement(for sql: String) -> Statement? {
        let identity = TextIdentity(sql)
        if let identity, let found = recent.first(where: { $0.identity == identity }) {
            clock &+= 1
            found.lastUse = clock
            return found.statement
        }
        guard let entry = entries[SQLKey(sql)] else { return nil }
        clock &+= 1
        entry.lastUse = clock
        // Only a text whose bytes are the very ones it was cached with: a constant string.
        // Text built anew for every call (SQL interpolation) would only churn the slots.
        if let identity, identity == entry.identity { remember(entry) }
        return entry.statement
    }

    private mutating func remember(_ found: Entry) {
        if recent.count < Self.recentCapacity {
            recent.append(found)
            return
        }
        recent[nextRecentSlot] = found
        nextRecentSlot = (nextRecentSlot + 1) % Self.recentCapacity
    }

    mutating func insert(_ statement: Statement, for sql: String) {
        guard capacity > 0 else { return }
        let key = SQLKey(sql)
        if let replaced = entries[key] {
            // Its recent texts must not keep finding the statement replaced.
            recent.removeAll { $0 === replaced }
        } else if entries.count >= capacity {
            var oldest: (key: SQLKey, entry: Entry)?
            for (key, entry) in entries where entry.lastUse < (oldest?.entry.lastUse ?? .max) && !entry.statement.isBusy {
                oldest = (key, entry)
            }
            if let oldest {
                entries[oldest.key] = nil
                recent.removeAll { $0 === oldest.entry }
                evictionCount += 1
            }
        }
        clock &+= 1
        entries[key] = Entry(statement: statement, lastUse: clock, sql: sql)
    }

    mutating func removeAll() {
        entries.removeAll()
        recent.removeAll()
        nextRecentSlot = 0
    }
}

/// Where a text's UTF-8 bytes are in memory and how many there are; nil for a text whose
/// bytes have no lasting address: one short enough to live inside the `String` value itself
/// (up to 15 bytes, copied out to a temporary buffer whenever they are read).
///
/// Two texts with one identity are the same bytes while either is alive: a native string's
/// storage never changes while it is shared, and no other allocation can take its address
/// before it is freed.
struct TextIdentity: Equatable {
    let address: UInt
    let count: Int

    /// The longest text Swift keeps inside the `String` value on 64-bit platforms.
    static let longestInlineText = 15

    init?(_ text: String) {
        guard text.utf8.count > Self.longestInlineText,
            let address = text.utf8.withContiguousStorageIfAvailable({ $0.baseAddress.map { UInt(bitPattern: $0) } }) ?? nil
        else { return nil }
        self.address = address
        count = text.utf8.count
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
