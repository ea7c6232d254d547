/// A zone's records in the order of their last change, for ``MockCloud``'s change feed: a page
/// costs what it returns (a binary search, then the entries it lists), not a filter and sort of
/// the whole zone. Without it, a first sync of n records cost the mock n²/page work and
/// dominated every measurement of the engine at 100,000 rows.
///
/// Entries are only appended, with increasing sequences, so they stay sorted. A record that
/// changes again leaves its old entry behind as stale; a Fenwick tree over the entries counts
/// the live ones after any position in O(log n), which gives a page its exact
/// `remainingEstimate`. When stale entries outnumber live ones, the feed is rebuilt.
struct MockCloudFeed {
    struct Entry {
        var sequence: Int64
        var name: String
        var isLive: Bool
    }

    private(set) var entries: [Entry] = []
    /// 1-based Fenwick tree of live flags.
    private var tree: [Int] = [0]
    private(set) var liveCount = 0

    /// Appends an entry; returns its position. `sequence` must exceed every earlier one.
    mutating func append(sequence: Int64, name: String) -> Int {
        let position = entries.count
        entries.append(Entry(sequence: sequence, name: name, isLive: true))
        let index = position + 1
        let lowest = index & -index
        // The node covers (index - lowest, index]: the new entry plus the live ones before it.
        tree.append(1 + livePrefix(index - 1) - livePrefix(index - lowest))
        liveCount += 1
        return position
    }

    /// Marks the entry at `position` stale: its record changed again or left the zone.
    mutating func markStale(at position: Int) {
        guard entries.indices.contains(position), entries[position].isLive else { return }
        entries[position].isLive = false
        liveCount -= 1
        var index = position + 1
        while index < tree.count {
            tree[index] -= 1
            index += index & -index
        }
    }

    /// Whether stale entries are so many that a rebuild pays.
    var wantsCompaction: Bool { entries.count > 64 && entries.count > 2 * liveCount }

    /// Live entries at positions below `end`.
    func livePrefix(_ end: Int) -> Int {
        var sum = 0
        var index = min(end, entries.count)
        while index > 0 {
            sum += tree[index]
            index -= index & -index
        }
        return sum
    }

    /// Live entries at `position` and after.
    func liveCount(from position: Int) -> Int { liveCount - livePrefix(position) }

    /// The first position whose entry's sequence exceeds `sequence`.
    func firstPosition(after sequence: Int64) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].sequence > sequence { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
