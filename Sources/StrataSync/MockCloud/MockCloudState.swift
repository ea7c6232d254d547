import Foundation

/// Everything a ``MockCloud`` holds, behind its lock.
struct MockCloudState {
    struct StoredRecord {
        var record: CloudRecord
        var sequence: Int64
    }

    struct Tombstone {
        var type: String
        var sequence: Int64
        /// The shared root the record was under when deleted: participants of that share see
        /// the deletion.
        var sharedRoot: CloudRecordID?
    }

    struct StoredShare {
        var share: CloudShare
        /// When each participant last gained access: their shared database reports the zone
        /// as changed since then.
        var accessChanged: [String: Int64] = [:]
    }

    struct Zone {
        var records: [String: StoredRecord] = [:]
        var tombstones: [String: Tombstone] = [:]
        /// Tokens older than this fail with changeTokenExpired (tombstones were purged).
        var horizon: Int64 = 0
        var lastChange: Int64
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
    var requestCounts: [MockCloud.Operation: Int] = [:]
    var assets: [String: CloudAsset] = [:]
    var assetUploads: [String: Int] = [:]
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
        var current = name
        var seen: Set<String> = []
        while seen.insert(current).inserted {
            let id = CloudRecordID(name: current, zone: zone)
            if shares[id] != nil { return id }
            guard let parent = parentOf(current), parent.zone == zone else { return nil }
            current = parent.name
        }
        return nil
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

    /// Records, for every participant who can no longer see any share of `zone`, that they
    /// lost it; call after changing or removing shares of the zone.
    mutating func recordRevocations(in zone: CloudZoneID, formerParticipants: Set<String>) {
        let stillShared = Set(shares.values.filter { $0.share.rootRecordID.zone == zone }
            .flatMap { share in share.share.participants.map(\.user).filter { share.share.permission(of: $0) > .none } })
        for user in formerParticipants.subtracting(stillShared) where user != zone.owner {
            revokedZones[user, default: [:]][zone] = nextSequence()
        }
    }

    /// The hint continuations of every other container whose user can see a changed zone.
    /// Conservative: every subscriber of another container of an owner or grantee hears it.
    func hintsForChange(by container: MockCloudContainer.ID?) -> [AsyncStream<Void>.Continuation] {
        hintSubscribers.values.filter { $0.container != container }.map(\.continuation)
    }
}
