import Foundation

/// Everything a ``MockCloud`` holds, behind its lock.
struct MockCloudState {
    struct StoredRecord {
        var record: CloudRecord
        var sequence: Int64
        /// Where its live entry is in the zone's ``MockCloudFeed``.
        var feedPosition: Int
    }

    /// A record gone from some feeds: deleted (every feed of the zone), or no longer under a
    /// share some participants could see (a departure: their feeds only).
    struct Tombstone {
        var type: String
        var sequence: Int64
        /// The participants who could see the record when it went: their shared database
        /// reports it deleted.
        var audience: Set<String>
        /// The field versions the record had when deleted (``CloudModifyRules/isSuperseded(_:byDeleteOf:)``);
        /// empty for a departure.
        var fieldVersions: [String: HybridTimestamp] = [:]
    }

    struct StoredShare {
        var share: CloudShare
        /// When each participant last gained access: their shared database reports the zone
        /// as changed since then.
        var accessChanged: [String: Int64] = [:]
    }

    struct Zone {
        /// Change them through ``store(_:sequence:)``, ``resequence(_:to:)`` and
        /// ``removeRecord(named:)``, which keep ``feed`` in step.
        private(set) var records = ExactKeyed<StoredRecord>()
        /// The records in the order of their last change.
        private(set) var feed = MockCloudFeed()
        var tombstones = ExactKeyed<Tombstone>()
        /// Records that left the view of some participants while staying in the zone: moved
        /// out of a share, or under a share that ended for them.
        var departures = ExactKeyed<Tombstone>()
        /// Tokens older than this fail with changeTokenExpired (tombstones were purged).
        var horizon: Int64 = 0
        var lastChange: Int64

        init(lastChange: Int64) {
            self.lastChange = lastChange
        }

        /// Saves `record` (new or replacing) as changed at `sequence`.
        mutating func store(_ record: CloudRecord, sequence: Int64) {
            let name = record.id.name
            if let old = records[name] { feed.markStale(at: old.feedPosition) }
            let position = feed.append(sequence: sequence, name: name)
            records[name] = StoredRecord(record: record, sequence: sequence, feedPosition: position)
            compactFeedIfWorthIt()
        }

        /// Moves a record to `sequence` in the feed, with a new change tag when given.
        mutating func resequence(_ name: String, to sequence: Int64, changeTag: String? = nil) {
            guard var stored = records[name] else { return }
            feed.markStale(at: stored.feedPosition)
            stored.sequence = sequence
            stored.feedPosition = feed.append(sequence: sequence, name: name)
            if let changeTag { stored.record.changeTag = changeTag }
            records[name] = stored
            compactFeedIfWorthIt()
        }

        mutating func removeRecord(named name: String) -> StoredRecord? {
            guard let removed = records.removeValue(forKey: name) else { return nil }
            feed.markStale(at: removed.feedPosition)
            compactFeedIfWorthIt()
            return removed
        }

        private mutating func compactFeedIfWorthIt() {
            guard feed.wantsCompaction else { return }
            var rebuilt = MockCloudFeed()
            for (name, stored) in records.sorted(by: { $0.value.sequence < $1.value.sequence }) {
                records[name]?.feedPosition = rebuilt.append(sequence: stored.sequence, name: name)
            }
            feed = rebuilt
        }
    }

    struct Fault {
        enum Kind {
            case fail(CloudError)
            case loseResponse
            case reorder
        }
        var kind: Kind
        var operations: Set<MockCloud.Operation>?
        var remaining: Int
    }

    struct HintSubscriber {
        var user: String
        var container: MockCloudContainer.ID
        var continuation: AsyncStream<Void>.Continuation
    }

    var zones: [CloudZoneID: Zone] = [:]
    var deletedZones: [CloudZoneID: Int64] = [:]
    /// Moves on every change; change tokens are positions in it.
    var sequence: Int64 = 0
    var nextTag: Int64 = 0
    var accountStatus: [String: CloudAccountStatus] = [:]
    var faults: [Fault] = []
    var limits = CloudLimits()
    var requestCounts: [MockCloud.Operation: Int] = [:]
    var assets: [String: CloudAsset] = [:]
    /// Who uploaded each asset: content is stored once, but reachable only by its uploaders and
    /// the users they share with.
    var assetUploaders: [String: Set<String>] = [:]
    var assetUploads: [String: Int] = [:]
    /// Each user's published public key.
    var publicKeys: [String: Data] = [:]
    /// Users' profiles, by user: what names participants in the shares the cloud returns.
    var profiles: [String: CloudUserProfile] = [:]
    /// Shares, by root record.
    var shares: [CloudRecordID: StoredShare] = [:]
    /// When a user lost the last share of a zone: their shared database reports it deleted.
    var revokedZones: [String: [CloudZoneID: Int64]] = [:]
    var hintSubscribers: [UUID: HintSubscriber] = [:]
    var beforeNextModify: (@Sendable () -> Void)?
    var modifyRequestSizes: [Int] = []

    mutating func nextSequence() -> Int64 {
        sequence += 1
        return sequence
    }

    mutating func newTag() -> String {
        nextTag += 1
        return "tag-\(nextTag)"
    }

    /// Takes one use of the first fault aimed at `operation`.
    mutating func takeFault(for operation: MockCloud.Operation) -> Fault.Kind? {
        guard let index = faults.firstIndex(where: { $0.remaining > 0 && ($0.operations?.contains(operation) ?? true) })
        else { return nil }
        faults[index].remaining -= 1
        let kind = faults[index].kind
        if faults[index].remaining == 0 { faults.remove(at: index) }
        return kind
    }

    /// Whether `user` may see anything of `zone` through a database of `scope`: their own
    /// zones in the private database, zones with a share they accepted in the shared one.
    func canAccess(_ zone: CloudZoneID, user: String, scope: CloudDatabaseScope) -> Bool {
        switch scope {
        case .private: zone.owner == user
        case .shared: zone.owner != user && sharedZones(of: user).contains(zone)
        }
    }

    /// The zones holding a share `user` accepted.
    func sharedZones(of user: String) -> Set<CloudZoneID> {
        Set(shares.values.filter { $0.share.owner != user && $0.share.permission(of: user) > .none }.map(\.share.rootRecordID.zone))
    }

    /// The shared root a record is under: the first record with a share on its parent chain,
    /// itself included. `parentOf` gives a record's parent (the zone's, or a pending save's).
    func sharedRoot(of name: String, in zone: CloudZoneID, parentOf: (String) -> CloudRecordID?) -> CloudRecordID? {
        CloudSharingRules.sharedRoot(
            of: name, in: zone, isSharedRoot: { shares[CloudRecordID(name: $0, zone: zone)] != nil }, parentOf: parentOf
        ).map { CloudRecordID(name: $0, zone: zone) }
    }

    /// What `user` may do with a record through a database of `scope`.
    func permission(
        of user: String, for name: String, in zone: CloudZoneID, scope: CloudDatabaseScope,
        parentOf: (String) -> CloudRecordID?
    ) -> CloudShare.Permission {
        switch scope {
        case .private:
            return zone.owner == user ? .readWrite : .none
        case .shared:
            guard zone.owner != user, let root = sharedRoot(of: name, in: zone, parentOf: parentOf) else { return .none }
            return shares[root]?.share.permission(of: user) ?? .none
        }
    }

    /// The participants who can see the records under `root` now (the owner excluded).
    func audience(of root: CloudRecordID?) -> Set<String> {
        guard let root, let share = shares[root]?.share else { return [] }
        return Set(share.participants.map(\.user).filter { $0 != share.owner && share.permission(of: $0) > .none })
    }

    /// The records of `zone` under `name` (itself included), through their parents.
    func subtree(of name: String, in zone: Zone) -> [String] {
        var children = ExactKeyed<[String]>()
        for stored in zone.records.values {
            if let parent = stored.record.parent { children[parent.name, default: []].append(stored.record.id.name) }
        }
        var result: [String] = []
        var queue = zone.records[name] == nil ? [] : [name]
        var seen = ExactNames()
        while let next = queue.popLast() {
            guard seen.insert(next) else { continue }
            result.append(next)
            queue += children[next] ?? []
        }
        return result
    }

    /// Records that the records under `name` left the view of `audience`: their shared
    /// database reports them deleted, though the records stay in the zone.
    mutating func recordDepartures(under name: String, in zoneID: CloudZoneID, audience: Set<String>) {
        let audience = audience.subtracting([zoneID.owner])
        guard !audience.isEmpty, var zone = zones[zoneID] else { return }
        for member in subtree(of: name, in: zone) {
            guard let stored = zone.records[member] else { continue }
            let earlier = zone.departures[member]?.audience ?? []
            zone.departures[member] = Tombstone(type: stored.record.type, sequence: nextSequence(), audience: earlier.union(audience))
        }
        zone.lastChange = sequence
        zones[zoneID] = zone
    }

    /// Records, for every participant who can no longer see any share of `zone`, that they
    /// lost it; call after changing or removing shares of the zone.
    mutating func recordRevocations(in zone: CloudZoneID, formerParticipants: Set<String>) {
        let stillShared = Set(
            shares.values.filter { $0.share.rootRecordID.zone == zone }
                .flatMap { share in share.share.participants.map(\.user).filter { share.share.permission(of: $0) > .none } })
        for user in formerParticipants.subtracting(stillShared) where user != zone.owner {
            revokedZones[user, default: [:]][zone] = nextSequence()
        }
    }

    /// Whether `user` may read the asset `hash`: they uploaded it, or an uploader shares with
    /// them (either way round), so a participant's upload serves the owner and back.
    func canRead(asset hash: String, user: String) -> Bool {
        guard let uploaders = assetUploaders[hash] else { return false }
        if uploaders.contains(user) { return true }
        let peers = shares.values.flatMap { stored -> [String] in
            let share = stored.share
            if share.owner == user { return share.participants.filter { $0.acceptance == .accepted }.map(\.user) }
            if share.participant(user)?.acceptance == .accepted { return [share.owner] }
            return []
        }
        return !uploaders.isDisjoint(with: peers)
    }

    /// The encoded size of the records in `owner`'s zones: what counts against their quota.
    func usedBytes(of owner: String) -> Int64 {
        zones.filter { $0.key.owner == owner }.values.reduce(Int64(0)) { total, zone in
            zone.records.values.reduce(total) { $0 + Int64($1.record.encodedSize) }
        }
    }

    /// How much each zone owner's records would grow if a request applied whole.
    func growth(saving saves: [CloudRecord], deleting deletes: [CloudRecordID]) -> [String: Int64] {
        var growth: [String: Int64] = [:]
        for record in saves {
            let before = zones[record.id.zone]?.records[record.id.name]?.record.encodedSize ?? 0
            growth[record.id.zone.owner, default: 0] += Int64(record.encodedSize - before)
        }
        for id in deletes {
            growth[id.zone.owner, default: 0] -= Int64(zones[id.zone]?.records[id.name]?.record.encodedSize ?? 0)
        }
        return growth
    }

    /// The hint continuations of every other container whose user can see a changed zone.
    /// Conservative: every subscriber of another container of an owner or grantee hears it.
    func hintsForChange(by container: MockCloudContainer.ID?) -> [AsyncStream<Void>.Continuation] {
        hintSubscribers.values.filter { $0.container != container }.map(\.continuation)
    }

    /// `share` with its participants named from the profiles `user` may read, as every share
    /// the cloud returns is (`CloudSharingRules.profilePeers(of:in:)`); every name when no user
    /// asks (a test inspecting the cloud).
    func named(_ share: CloudShare, for user: String?) -> CloudShare {
        guard let user else { return share.naming { profiles[$0] } }
        let peers = CloudSharingRules.profilePeers(of: user, in: shares.values.map(\.share))
        return share.naming { peers.contains($0) ? profiles[$0] : nil }
    }
}
