import Synchronization

/// Issues the versions of one device's edits: hybrid logical clock timestamps (Kulkarni et
/// al., 2014).
///
/// A timestamp is the largest physical time seen (Unix milliseconds), a counter that orders
/// events within one millisecond, and the device's id as the final tie-break. The clock never
/// goes backwards, and every timestamp it issues after it ``observe(_:)``d a remote one is
/// greater than that remote one. That is what makes the merge rule fair to devices with wrong
/// clocks: an edit made *after* a device received another edit always wins over it, even when
/// the device's wall clock is hours behind, where a wall-clock rule would make it lose every
/// conflict. Only truly concurrent edits (neither device had seen the other's) are ordered by
/// physical time, and a remote timestamp further ahead of the local clock than
/// ``maximumDrift`` is reported, so a wrong clock never goes unnoticed.
public final class HybridLogicalClock: Sendable {
    /// The device's id, the last component of every timestamp it issues.
    public let node: String
    /// How far ahead of the local physical time a remote timestamp may be before
    /// ``observe(_:)`` reports it.
    public let maximumDrift: Duration
    private let physicalTime: @Sendable () -> Int64
    /// The latest reading, milliseconds and counter; the node is constant.
    private let latest: Mutex<(milliseconds: Int64, counter: UInt32)>
    /// The greatest packed time issued by ``next()`` or received by ``observe(_:)``; see
    /// ``issuedOrReceived``.
    private let greatestIssuedOrReceived: Atomic<Int64>

    /// - Parameters:
    ///   - node: the device's id (unique per device; `:` and `@` are not allowed).
    ///   - physicalTime: the current Unix time in milliseconds; injected so tests control it.
    ///   - maximumDrift: see ``maximumDrift``.
    ///   - last: the last timestamp issued before a restart, so the clock never goes
    ///     backwards across launches even if the wall clock did.
    public init(
        node: String,
        physicalTime: @escaping @Sendable () -> Int64,
        maximumDrift: Duration = .seconds(300),
        restoring last: HybridTimestamp? = nil
    ) {
        self.node = node
        self.physicalTime = physicalTime
        self.maximumDrift = maximumDrift
        let restored = last.map { Self.normalized($0.milliseconds, Int64($0.counter)) } ?? (0, 0)
        latest = Mutex(restored)
        // What the clock did before the restart may not be accounted for yet (a crash between
        // a version's issue and the transaction that would have recorded it).
        let restoredTime = HybridTimestamp.packedTime(milliseconds: restored.0, counter: restored.1)
        greatestIssuedOrReceived = Atomic(last == nil ? Int64.min : restoredTime)
    }

    /// The timestamp of a new local event: greater than every timestamp issued or observed
    /// before.
    public func next() -> HybridTimestamp {
        let (milliseconds, counter) = advance()
        greatestIssuedOrReceived.raise(to: HybridTimestamp.packedTime(milliseconds: milliseconds, counter: counter))
        return HybridTimestamp(milliseconds: milliseconds, counter: counter, node: node)
    }

    /// ``next()`` as its `HybridTimestamp.packedTime`: what capture triggers store, with no
    /// text to format for every changed row. A version so issued goes into the change log,
    /// which orders later edits after it: the clock floor the engine keeps in the file does
    /// not count it.
    public func nextPackedTime() -> Int64 {
        let (milliseconds, counter) = advance()
        return HybridTimestamp.packedTime(milliseconds: milliseconds, counter: counter)
    }

    private func advance() -> (Int64, UInt32) {
        let now = physicalTime()
        return latest.withLock { latest in
            latest =
                now > latest.milliseconds
                ? (now, 0)
                : Self.normalized(latest.milliseconds, Int64(latest.counter) + 1)
            return latest
        }
    }

    /// Keeps the counter below `HybridTimestamp.counterLimit` by moving to the next
    /// millisecond, which orders after every counter of the current one: the clock stays
    /// monotonic, and a timestamp always packs into one integer.
    private static func normalized(_ milliseconds: Int64, _ counter: Int64) -> (milliseconds: Int64, counter: UInt32) {
        counter < Int64(HybridTimestamp.counterLimit) ? (milliseconds, UInt32(counter)) : (milliseconds + 1, 0)
    }

    /// Moves the clock past a timestamp received from another device, so the next local
    /// timestamp orders after it.
    ///
    /// - Returns: how far the remote timestamp was ahead of local physical time when that is
    ///   more than ``maximumDrift`` (the caller logs it), or nil.
    @discardableResult
    public func observe(_ remote: HybridTimestamp) -> Duration? {
        greatestIssuedOrReceived.raise(to: remote.packedTime)
        return observeLogged(remote)
    }

    /// ``observe(_:)`` for a version already in the change log (written by this file's
    /// capture), which does not count in ``issuedOrReceived``: the log itself orders later
    /// edits after it.
    @discardableResult
    func observeLogged(_ remote: HybridTimestamp) -> Duration? {
        let now = physicalTime()
        latest.withLock { latest in
            let milliseconds = max(latest.milliseconds, remote.milliseconds, now)
            let counter: Int64
            if milliseconds == latest.milliseconds && milliseconds == remote.milliseconds {
                counter = Int64(max(latest.counter, remote.counter)) + 1
            } else if milliseconds == latest.milliseconds {
                counter = Int64(latest.counter) + 1
            } else if milliseconds == remote.milliseconds {
                counter = Int64(remote.counter) + 1
            } else {
                counter = 0
            }
            latest = Self.normalized(milliseconds, counter)
        }
        let ahead = Duration.milliseconds(remote.milliseconds - now)
        return ahead > maximumDrift ? ahead : nil
    }

    /// The greatest time (a `HybridTimestamp.packedTime`) the clock issued with ``next()`` or
    /// received with ``observe(_:)``: the versions of the engine's own stamps and of
    /// other devices' edits, which the file's clock floor must cover (`CaptureClockFloor`);
    /// `Int64.min` before any. The change log's versions are left out: the log's last entry
    /// covers them, and raising the floor for them cost every send a write of the user's
    /// file (an fsync on the push path, issue #27). After a restart, the restored reading.
    var issuedOrReceived: Int64 { greatestIssuedOrReceived.load(ordering: .acquiring) }

    /// The last timestamp issued or observed, to persist across launches.
    public var lastTimestamp: HybridTimestamp {
        let (milliseconds, counter) = latest.withLock { $0 }
        return HybridTimestamp(milliseconds: milliseconds, counter: counter, node: node)
    }
}

extension Atomic<Int64> {
    /// Raises the value to `value` when it is greater.
    fileprivate func raise(to value: Int64) {
        var current = load(ordering: .relaxed)
        while value > current {
            let (exchanged, original) = compareExchange(
                expected: current, desired: value, successOrdering: .acquiringAndReleasing, failureOrdering: .relaxed)
            if exchanged { return }
            current = original
        }
    }
}
