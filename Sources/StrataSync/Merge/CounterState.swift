/// The state of one counter column in one record: what each device added, and a base.
///
/// Each *lane* is a running total with the version of its last change. A device writes only
/// its own lane, with versions from its own clock, so its lane only moves forward; the base
/// is the value a row was created with (or the difference a writer that does not know the
/// counter made: an older app version), and it is a plain last-writer-wins register. Merging
/// keeps, lane by lane, the copy with the greater version: that is commutative, associative
/// and idempotent, so every device that has seen the same states holds the same state, and
/// the counter's value is the sum of its lanes.
///
/// Why net totals with versions, not the classic pair of grow-only maps of increments and
/// decrements (a PN-counter): the same convergence, but a lane stays the size of what the
/// device really added (a PN-counter's two sums grow with every `+1 -1`, towards overflow),
/// and the base lane, which must be able to go down, has the same shape.
///
/// No database and no clock: the engine reads and writes, this decides. Unit-tested alone
/// (CounterStateTests).
struct CounterState: Hashable, Sendable, Codable {
    /// One writer's running total.
    struct Lane: Hashable, Sendable, Codable {
        /// What the writer added in all, negative when it took away more.
        var value: Int64
        /// The version of the writer's last change to it.
        var version: HybridTimestamp

        /// The newer of two copies of a lane; two copies with one version are one change,
        /// and the larger value keeps the choice deterministic anyway.
        func merged(with other: Lane) -> Lane {
            if version != other.version { return version > other.version ? self : other }
            return value >= other.value ? self : other
        }
    }

    /// The value the row started with, or the last value set by a writer that does not know
    /// the counter, minus what the device lanes held then.
    var base: Lane?
    /// Each device's lane, by device id.
    var devices: [String: Lane] = [:]

    /// The sum of the lanes overflowed `Int64`.
    struct Overflow: Error, Equatable {}

    /// The field of a cloud record that carries a counter column's state.
    static func fieldName(of column: String) -> String { "strata.counter.\(column)" }

    /// The counter's value: the sum of its lanes.
    func total() throws(Overflow) -> Int64 {
        try Self.sum([base?.value ?? 0] + devices.values.map(\.value))
    }

    /// The lane-by-lane merge of two states.
    func merged(with other: CounterState) -> CounterState {
        var result = self
        result.base =
            switch (base, other.base) {
            case (let mine?, let theirs?): mine.merged(with: theirs)
            case (let mine, let theirs): mine ?? theirs
            }
        result.devices.merge(other.devices) { $0.merged(with: $1) }
        return result
    }

    /// The state after this device's local edits brought the column to `value`: its lane
    /// takes whatever the other lanes do not explain. Unchanged when they explain all of it.
    ///
    /// - Parameter version: called for the lane's new version only when it changes.
    func folding(value: Int64, device: String, version: () -> HybridTimestamp) throws(Overflow) -> CounterState {
        guard try total() != value else { return self }
        let others = try Self.sum([base?.value ?? 0] + devices.filter { $0.key != device }.map(\.value.value))
        let (own, overflow) = value.subtractingReportingOverflow(others)
        if overflow { throw Overflow() }
        var result = self
        result.devices[device] = Lane(value: own, version: version())
        return result
    }

    /// The state a record describes: the state it carries, made to agree with its plain
    /// value. A writer that does not know the counter (an older app version) changes the
    /// plain value and carries the state it received untouched; the difference is its edit,
    /// and goes to the base at that edit's version. For a record written by this version the
    /// two agree and nothing changes. Every device derives the same state from one record.
    ///
    /// - Parameters:
    ///   - carried: the state in the record's counter field; nil when it has none.
    ///   - plainValue: the record's value of the column.
    ///   - plainVersion: the version of the column's field.
    static func described(
        carried: CounterState?, plainValue: Int64, plainVersion: HybridTimestamp?
    ) throws(Overflow)
        -> CounterState
    {
        var state = carried ?? CounterState()
        let total = try state.total()
        guard total != plainValue else { return state }
        let (difference, overflow) = plainValue.subtractingReportingOverflow(total)
        let (base, baseOverflow) = (state.base?.value ?? 0).addingReportingOverflow(difference)
        if overflow || baseOverflow { throw Overflow() }
        let version = [plainVersion, state.base?.version].compactMap { $0 }.max() ?? .oldest
        state.base = Lane(value: base, version: version)
        return state
    }

    /// A state for a row the engine meets with no state: its whole value is a base, at the
    /// version of the change that made it (the insert's, or the oldest there is for rows seeded
    /// before sync knew them, so that a state the cloud already holds wins).
    static func created(value: Int64, version: HybridTimestamp) -> CounterState {
        CounterState(base: Lane(value: value, version: version))
    }

    /// The sum, in 128 bits: lanes come in any order (a dictionary's), and a sum that fits
    /// must not fail on one device because a partial sum did not.
    private static func sum(_ values: [Int64]) throws(Overflow) -> Int64 {
        var total: Int128 = 0
        for value in values { total += Int128(value) }
        guard let result = Int64(exactly: total) else { throw Overflow() }
        return result
    }
}

extension HybridTimestamp {
    /// The oldest version there is: what rows seeded before sync knew them carry.
    /// (Its node is not empty: the text form requires one.)
    static let oldest = HybridTimestamp(packedTime: 0, node: "0")
}
