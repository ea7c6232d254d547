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
        case setUserProfile, fetchUserProfile
    }

    /// The container identifier every container of this cloud reports.
    public let identifier: String
    /// Tells this cloud from every other one in the process (previews and tests make many with
    /// one identifier): what its users' devices keep, they keep per cloud.
    package let instanceID = UUID()
    let state: Mutex<MockCloudState>

    /// An empty cloud; `limits` are what one request may carry.
    public init(identifier: String = "iCloud.strata.mock", limits: CloudLimits = CloudLimits()) {
        self.identifier = identifier
        var initial = MockCloudState()
        initial.limits = limits
        state = Mutex(initial)
    }

    /// What one request may carry, and each user's quota. Settable at any time: a test lowers
    /// the quota after a first sync, or the item limit in the middle of one; requests from then
    /// on are checked against the new limits, and what the cloud holds stays.
    public var limits: CloudLimits {
        get { state.withLock { $0.limits } }
        set { state.withLock { $0.limits = newValue } }
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

    /// The faults injected and not used up yet, in the order they apply: what a test set up
    /// and the engine has not met.
    public var injectedFaults: [InjectedFault] {
        state.withLock { state in
            state.faults.map { fault in
                let kind: InjectedFault.Kind =
                    switch fault.kind {
                    case .fail(let error): .fail(error)
                    case .loseResponse: .loseResponse
                    case .reorder: .reorder
                    }
                return InjectedFault(kind: kind, operations: fault.operations, remaining: fault.remaining)
            }
        }
    }

    /// Drops every injected fault not used up yet; requests from then on are served plainly.
    public func clearInjectedFaults() {
        state.withLock { $0.faults.removeAll() }
    }

    /// Delivers the next `count` pages of zone changes with their records and tombstones in
    /// reverse order: children before their parents, later edits before earlier ones. The
    /// service promises no order within a page, and an engine must not depend on one.
    public func reorderNextFetches(_ count: Int) {
        state.withLock {
            $0.faults.append(MockCloudState.Fault(kind: .reorder, operations: [.fetchZoneChanges], remaining: count))
        }
    }

    /// A fault injected by ``failNextRequests(_:with:operations:)``,
    /// ``loseNextResponses(_:operations:)`` or ``reorderNextFetches(_:)``, as ``injectedFaults``
    /// reports it.
    public struct InjectedFault: Sendable, Hashable {
        /// What the fault does to a request.
        public enum Kind: Sendable, Hashable {
            /// The request fails with the error before it changes anything.
            case fail(CloudError)
            /// The request applies, then its answer is lost (``CloudError/networkFailure``).
            case loseResponse
            /// A page of zone changes arrives back to front.
            case reorder
        }

        /// What it does.
        public var kind: Kind
        /// The operations it is aimed at; nil for any.
        public var operations: Set<Operation>?
        /// How many more requests it will hit.
        public var remaining: Int

        /// A fault as ``MockCloud/injectedFaults`` reports it, for comparing.
        public init(kind: Kind, operations: Set<Operation>?, remaining: Int) {
            self.kind = kind
            self.operations = operations
            self.remaining = remaining
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
        state.withLock { state in state.shares[root].map { state.named($0.share, for: nil) } }
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
