import Foundation
import Synchronization

/// An in-memory cloud that behaves like the real service, for previews and tests.
///
/// One `MockCloud` is one server holding many users' zones. ``container(user:)`` gives a
/// device's view of it, so a test runs several devices and users against the same cloud:
///
/// ```swift
/// let cloud = MockCloud()
/// let phone = try SyncEngine(for: phoneDatabase, tables: Game.self, container: cloud.container(user: "alice"))
/// let laptop = try SyncEngine(for: laptopDatabase, tables: Game.self, container: cloud.container(user: "alice"))
/// ```
///
/// It keeps the service's rules (change tags, atomic zones, parent references, limits,
/// tombstones and expiring tokens) and its own test suite checks each one. Records are values,
/// so nothing a caller does to a record changes what the cloud holds. Faults can be injected:
/// ``failNextRequests(_:with:operations:)`` fails requests before they apply, and
/// ``loseNextResponses(_:operations:)`` applies them and then loses the answer, and
/// ``reorderNextFetches(_:)`` delivers pages of changes back to front.
public final class MockCloud: Sendable {
    /// The requests a cloud database serves, to aim injected faults and count requests.
    public enum Operation: String, Sendable, Hashable, CaseIterable {
        case saveZones, deleteZones, fetchRecords, modifyRecords, fetchDatabaseChanges, fetchZoneChanges
        case missingAssets, uploadAssets, fetchAsset
        case saveShare, fetchShare, deleteShare, acceptShare
        case publishPublicKey, fetchPublicKeys
    }

    /// The container identifier every container of this cloud reports.
    public let identifier: String
    /// Tells this cloud from every other one in the process (previews and tests make many with
    /// one identifier): what its users' devices keep, they keep per cloud.
    package let instanceID = UUID()
    /// What one request may carry.
    public let limits: CloudLimits
    let state = Mutex(MockCloudState())

    /// An empty cloud; `limits` are what one request may carry.
    public init(identifier: String = "iCloud.strata.mock", limits: CloudLimits = CloudLimits()) {
        self.identifier = identifier
        self.limits = limits
    }

    /// A device's container for `user`; every container of one user sees the same data.
    public func container(user: String) -> MockCloudContainer {
        MockCloudContainer(cloud: self, user: user)
    }

    /// Sets a user's account status; every request of a user whose account is not available
    /// fails with ``CloudError/notAuthenticated``.
    public func setAccountStatus(_ status: CloudAccountStatus, for user: String) {
        state.withLock { $0.accountStatus[user] = status }
    }

    /// Fails the next `count` requests (of `operations`, or any) with `error`, before they
    /// change anything.
    public func failNextRequests(_ count: Int, with error: CloudError, operations: Set<Operation>? = nil) {
        state.withLock { $0.faults.append(MockCloudState.Fault(kind: .fail(error), operations: operations, remaining: count)) }
    }

    /// Applies the next `count` requests (of `operations`, or any) and then throws
    /// ``CloudError/networkFailure``, as when a response is lost after the change landed.
    public func loseNextResponses(_ count: Int, operations: Set<Operation>? = nil) {
        state.withLock { $0.faults.append(MockCloudState.Fault(kind: .loseResponse, operations: operations, remaining: count)) }
    }

    /// Delivers the next `count` pages of zone changes with their records and tombstones in
    /// reverse order: children before their parents, later edits before earlier ones. The
    /// service promises no order within a page, and an engine must not depend on one.
    public func reorderNextFetches(_ count: Int) {
        state.withLock {
            $0.faults.append(MockCloudState.Fault(kind: .reorder, operations: [.fetchZoneChanges], remaining: count))
        }
    }

    /// How many requests of `operation` the cloud received, failed ones included.
    public func requestCount(_ operation: Operation) -> Int {
        state.withLock { $0.requestCounts[operation, default: 0] }
    }

    /// The number of saves plus deletes of every modify request applied so far, in order.
    package var modifyRequestSizes: [Int] {
        state.withLock { $0.modifyRequestSizes }
    }

    /// The records a zone holds, by name.
    public func records(in zone: CloudZoneID) -> [CloudRecord] {
        state.withLock { state in
            (state.zones[zone]?.records.values.map(\.record) ?? []).sorted { $0.id.name < $1.id.name }
        }
    }

    /// The zones a user owns, by name.
    public func zones(owner: String) -> [CloudZoneID] {
        state.withLock { state in state.zones.keys.filter { $0.owner == owner }.sorted { $0.name < $1.name } }
    }

    /// Forgets a zone's tombstones, as the service does after a while: a change token from
    /// before now fails with ``CloudError/changeTokenExpired``.
    public func purgeTombstones(in zone: CloudZoneID) {
        state.withLock { state in
            guard var stored = state.zones[zone] else { return }
            stored.tombstones.removeAll()
            stored.departures.removeAll()
            // Every token issued so far is before the horizon.
            stored.horizon = state.nextSequence()
            state.zones[zone] = stored
        }
    }

    /// How many times an asset's content was uploaded (an upload of held content is skipped).
    public func uploadCount(ofAsset hash: String) -> Int {
        state.withLock { $0.assetUploads[hash, default: 0] }
    }

    /// Runs `action` when the next modify request arrives, before it is applied: tests use it to
    /// change a device's data while its batch is in flight. `action` must not call the cloud.
    package func beforeNextModify(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.beforeNextModify = action }
    }

    /// The share of a root as the cloud holds it, whoever asks: for tests.
    public func share(of root: CloudRecordID) -> CloudShare? {
        state.withLock { $0.shares[root]?.share }
    }

    // MARK: - Serving requests

    /// Runs one request: the account check, injected faults, the request counter, then `body`
    /// under the lock; a lost response is thrown after `body` applied.
    func serve<T>(
        _ operation: Operation, user: String, from container: MockCloudContainer.ID? = nil,
        _ body: (inout MockCloudState) throws -> T
    ) throws -> T {
        if operation == .modifyRecords,
            let action = state.withLock({ state in
                defer { state.beforeNextModify = nil }
                return state.beforeNextModify
            })
        {
            action()
        }
        let (result, hints) = try state.withLock { state -> (T, [AsyncStream<Void>.Continuation]) in
            state.requestCounts[operation, default: 0] += 1
            guard state.accountStatus[user, default: .available] == .available else { throw CloudError.notAuthenticated }
            let fault = state.takeFault(for: operation)
            if case .fail(let error) = fault { throw error }
            let before = state.sequence
            var result = try body(&state)
            if case .reorder = fault, var page = result as? CloudZoneChanges {
                page.changed.reverse()
                page.deleted.reverse()
                result = (page as? T) ?? result
            }
            let hints = state.sequence != before ? state.hintsForChange(by: container) : []
            if case .loseResponse = fault {
                for hint in hints { hint.yield() }
                throw CloudError.networkFailure
            }
            return (result, hints)
        }
        for hint in hints { hint.yield() }
        return result
    }
}
