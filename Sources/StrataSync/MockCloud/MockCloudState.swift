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
    var grants: [CloudZoneID: Set<String>] = [:]
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

    /// Whether `user` may read and write `zone` through a database of `scope`.
    func canAccess(_ zone: CloudZoneID, user: String, scope: CloudDatabaseScope) -> Bool {
        switch scope {
        case .private: zone.owner == user
        case .shared: zone.owner != user && grants[zone]?.contains(user) == true
        }
    }

    /// The hint continuations of every other container whose user can see a changed zone.
    /// Conservative: every subscriber of another container of an owner or grantee hears it.
    func hintsForChange(by container: MockCloudContainer.ID?) -> [AsyncStream<Void>.Continuation] {
        hintSubscribers.values.filter { $0.container != container }.map(\.continuation)
    }
}
