/// How far the sends and fetches under way have come, per zone: records sent and fetched
/// against estimated totals. Read it from ``SyncEngineStatus/progress``.
///
/// The totals are estimates. A send's comes from what was pending when it started (changes
/// committed meanwhile, and records sent again after a merge, raise it); a fetch's from the
/// cloud's `CloudZoneChanges.remainingEstimate`, usually an upper bound that shrinks to the
/// truth as pages arrive. A direction with nothing under way reads zero: the engine clears
/// its numbers when a send or fetch ends, whether it succeeded, failed or was cancelled.
public struct SyncProgress: Sendable, Hashable {
    /// One zone's numbers.
    public struct Zone: Sendable, Hashable {
        /// Records whose change the cloud accepted during the send under way.
        public var sent = 0
        /// The records the send under way is expected to send, ``sent`` included.
        public var toSend = 0
        /// Changes (records and deletions) applied during the fetch under way.
        public var fetched = 0
        /// The changes the fetch under way is expected to apply, ``fetched`` included.
        public var toFetch = 0

        /// A zone's numbers from their parts.
        public init(sent: Int = 0, toSend: Int = 0, fetched: Int = 0, toFetch: Int = 0) {
            self.sent = sent
            self.toSend = toSend
            self.fetched = fetched
            self.toFetch = toFetch
        }

        /// Whether nothing is under way in this zone.
        public var isEmpty: Bool { sent == 0 && toSend == 0 && fetched == 0 && toFetch == 0 }

        /// The share of this zone's expected work done, from 0 to 1; 1 when none is expected.
        public var fractionCompleted: Double { SyncProgress.fraction(sent + fetched, of: toSend + toFetch) }
    }

    /// The zones with a send or fetch under way.
    public var zones: [CloudZoneID: Zone] = [:]

    /// No progress: nothing under way.
    public init() {}

    /// Progress with these zones' numbers.
    public init(zones: [CloudZoneID: Zone]) {
        self.zones = zones.filter { !$0.value.isEmpty }
    }

    /// Records sent so far, in every zone.
    public var sent: Int { zones.values.reduce(0) { $0 + $1.sent } }
    /// Records expected to be sent, in every zone.
    public var toSend: Int { zones.values.reduce(0) { $0 + $1.toSend } }
    /// Changes fetched so far, in every zone.
    public var fetched: Int { zones.values.reduce(0) { $0 + $1.fetched } }
    /// Changes expected to be fetched, in every zone.
    public var toFetch: Int { zones.values.reduce(0) { $0 + $1.toFetch } }

    /// Whether nothing is under way.
    public var isEmpty: Bool { zones.isEmpty }

    /// The share of the expected work done, sending and fetching together, from 0 to 1; 1 when
    /// none is expected.
    public var fractionCompleted: Double { Self.fraction(sent + fetched, of: toSend + toFetch) }
    /// The share of the expected records sent; 1 when none are expected.
    public var fractionSent: Double { Self.fraction(sent, of: toSend) }
    /// The share of the expected changes fetched; 1 when none are expected.
    public var fractionFetched: Double { Self.fraction(fetched, of: toFetch) }

    static func fraction(_ done: Int, of total: Int) -> Double {
        guard total > 0 else { return 1 }
        return min(1, Double(max(0, done)) / Double(total))
    }
}

extension SyncProgress {
    /// A send starts with `pending` records waiting in each zone.
    package mutating func startSending(_ pending: [CloudZoneID: Int]) {
        finishSending()
        for (zone, count) in pending where count > 0 {
            zones[zone, default: Zone()].toSend = count
        }
    }

    /// The cloud accepted `accepted` records per zone; a total the send outgrew (changes
    /// committed meanwhile, records sent again after a merge) grows with it.
    package mutating func recordSent(_ accepted: [CloudZoneID: Int]) {
        for (zone, count) in accepted where count > 0 {
            var numbers = zones[zone, default: Zone()]
            numbers.sent += count
            numbers.toSend = max(numbers.toSend, numbers.sent)
            zones[zone] = numbers
        }
    }

    /// The send ended: its numbers go.
    package mutating func finishSending() {
        for zone in Array(zones.keys) {
            zones[zone]?.sent = 0
            zones[zone]?.toSend = 0
            if zones[zone]?.isEmpty == true { zones[zone] = nil }
        }
    }

    /// A page of `count` changes of `zone` was applied. `fromStart`: the page was asked for
    /// without a token (a first fetch, or one again after an expired token), so what was
    /// counted before for the zone starts over. Without the cloud's estimate, a page that says
    /// more is coming counts as one more page of `pageSize`.
    package mutating func recordFetchedPage(
        in zone: CloudZoneID, count: Int, moreComing: Bool, remainingEstimate: Int?, pageSize: Int, fromStart: Bool
    ) {
        var numbers = zones[zone, default: Zone()]
        numbers.fetched = (fromStart ? 0 : numbers.fetched) + max(0, count)
        let remaining = moreComing ? max(1, remainingEstimate ?? max(1, pageSize)) : 0
        numbers.toFetch = numbers.fetched + remaining
        zones[zone] = numbers.isEmpty ? nil : numbers
    }

    /// The fetch ended: its numbers go.
    package mutating func finishFetching() {
        for zone in Array(zones.keys) {
            zones[zone]?.fetched = 0
            zones[zone]?.toFetch = 0
            if zones[zone]?.isEmpty == true { zones[zone] = nil }
        }
    }
}
