import Dispatch
import Synchronization

/// Where a writer announces its commits, and where observers register the region they care
/// about.
///
/// For Strata's own modules (`package` access): from outside, a commit can only be announced
/// by committing, or with ``DatabaseWriter/notifyChanges(in:)``, and observed with
/// ``DatabaseWriter/observeChanges(in:onChange:)``.
///
/// Observers are indexed by table name, so a commit costs a lookup per changed table, not a
/// check per observer: 1,000 observers of other tables add nothing measurable to a write.
/// Callbacks run on the writer's queue right after the commit, outside the hub's lock; they
/// must only schedule work (a re-fetch on a reader), never block.
package final class DatabaseChangeHub: Sendable {
    private struct Entry {
        var region: DatabaseRegion
        var onChange: @Sendable () -> Void
    }

    private struct State {
        var nextID: UInt64 = 1
        var entries: [UInt64: Entry] = [:]
        var idsByTableName: [String: Set<UInt64>] = [:]
        var fullDatabaseIDs: Set<UInt64> = []
    }

    private let state = Mutex(State())
    private let registeredObservers = Atomic<Int>(0)
    private let commits = Atomic<UInt64>(0)
    private let inlineReadBudgetNanoseconds: UInt64
    /// Until when (`DispatchTime` uptime nanoseconds) the commit being announced now lets
    /// observers read inline; 0 outside an announcement.
    private let inlineReadDeadline = Atomic<UInt64>(0)

    /// A hub whose commit announcements let observers read inline on the writer's thread for
    /// up to `inlineReadBudget` in all (see ``DatabaseReader/readAfterCommit(estimatedDuration:_:completion:)``).
    package init(inlineReadBudget: Duration = .zero) {
        let (seconds, attoseconds) = max(inlineReadBudget, .zero).components
        inlineReadBudgetNanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// What remains of the inline-read budget of the commit being announced now; zero outside
    /// an announcement made by a commit.
    package var inlineReadTimeRemaining: Duration {
        let deadline = inlineReadDeadline.load(ordering: .relaxed)
        guard deadline != 0 else { return .zero }
        let now = DispatchTime.now().uptimeNanoseconds
        return deadline > now ? .nanoseconds(Int64(deadline - now)) : .zero
    }

    /// Whether anyone observes. The writer's update hook checks this first, so tracking
    /// changed tables costs one atomic load per row when nobody observes.
    package var hasObservers: Bool { registeredObservers.load(ordering: .relaxed) > 0 }

    /// The number of registered observers.
    package var observerCount: Int { registeredObservers.load(ordering: .relaxed) }

    /// How many commits have been announced. An observer compares it before and after a fetch
    /// to learn whether commits happened meanwhile.
    package var commitCount: UInt64 { commits.load(ordering: .acquiring) }

    /// Registers `onChange` for commits that change a table of `region`.
    package func addObserver(region: DatabaseRegion, onChange: @escaping @Sendable () -> Void) -> DatabaseChangeRegistration {
        let id = state.withLock { state -> UInt64 in
            let id = state.nextID
            state.nextID += 1
            state.entries[id] = Entry(region: region, onChange: onChange)
            Self.index(id, region: region, in: &state)
            return id
        }
        registeredObservers.add(1, ordering: .relaxed)
        return DatabaseChangeRegistration(hub: self, id: id)
    }

    func update(_ id: UInt64, region: DatabaseRegion) {
        state.withLock { state in
            guard let old = state.entries[id]?.region, old != region else { return }
            Self.unindex(id, region: old, in: &state)
            state.entries[id]?.region = region
            Self.index(id, region: region, in: &state)
        }
    }

    /// Whether the registration `id` is still in the hub (not cancelled, not released).
    func isRegistered(_ id: UInt64) -> Bool {
        state.withLock { $0.entries[id] != nil }
    }

    func remove(_ id: UInt64) {
        let removed = state.withLock { state -> Bool in
            guard let entry = state.entries.removeValue(forKey: id) else { return false }
            Self.unindex(id, region: entry.region, in: &state)
            return true
        }
        if removed { registeredObservers.subtract(1, ordering: .relaxed) }
    }

    /// Announces a commit that changed these tables (possibly none that were tracked, when
    /// observation started mid-transaction: observers of the full database hear every commit).
    ///
    /// With `allowingInlineReads` (the writer's own announcement, on its queue right after the
    /// commit), the observers called may read inline within the hub's budget.
    package func notifyCommit(changedTables: Set<QualifiedTable>, allowingInlineReads: Bool = false) {
        commits.add(1, ordering: .releasing)
        guard hasObservers else { return }
        let callbacks = state.withLock { state -> [@Sendable () -> Void] in
            var ids = state.fullDatabaseIDs
            for table in changedTables {
                if let observers = state.idsByTableName[table.name] { ids.formUnion(observers) }
            }
            return ids.compactMap { id in
                guard let entry = state.entries[id] else { return nil }
                if entry.region.isFullDatabase || entry.region.isModified(byChangesTo: changedTables) {
                    return entry.onChange
                }
                return nil
            }
        }
        guard !callbacks.isEmpty else { return }
        let opensBudget = allowingInlineReads && inlineReadBudgetNanoseconds > 0
        if opensBudget {
            inlineReadDeadline.store(DispatchTime.now().uptimeNanoseconds + inlineReadBudgetNanoseconds, ordering: .relaxed)
        }
        defer { if opensBudget { inlineReadDeadline.store(0, ordering: .relaxed) } }
        for callback in callbacks { callback() }
    }

    /// Calls every observer, whatever its region.
    package func notifyAll() {
        commits.add(1, ordering: .releasing)
        let callbacks = state.withLock { $0.entries.values.map(\.onChange) }
        for callback in callbacks { callback() }
    }

    private static func index(_ id: UInt64, region: DatabaseRegion, in state: inout State) {
        if region.isFullDatabase {
            state.fullDatabaseIDs.insert(id)
            return
        }
        for table in region.tables {
            state.idsByTableName[table.name, default: []].insert(id)
        }
    }

    private static func unindex(_ id: UInt64, region: DatabaseRegion, in state: inout State) {
        state.fullDatabaseIDs.remove(id)
        for table in region.tables {
            state.idsByTableName[table.name]?.remove(id)
            if state.idsByTableName[table.name]?.isEmpty == true {
                state.idsByTableName[table.name] = nil
            }
        }
    }
}

/// An observation registered with ``DatabaseWriter/observeChanges(in:onChange:)``; it ends when
/// cancelled or released.
public final class DatabaseChangeRegistration: Sendable {
    private let hub: DatabaseChangeHub
    private let id: UInt64

    init(hub: DatabaseChangeHub, id: UInt64) {
        self.hub = hub
        self.id = id
    }

    deinit {
        hub.remove(id)
    }

    /// Replaces the observed region (a query may read other tables after the data changed).
    package func update(region: DatabaseRegion) {
        hub.update(id, region: region)
    }

    /// Ends the registration: `onChange` is not called again.
    package func cancel() {
        hub.remove(id)
    }

    /// Whether the hub still calls this registration's callback: true from
    /// ``DatabaseWriter/observeChanges(in:onChange:)`` until ``cancel()`` (or release).
    ///
    /// Unlike the hub's observer count, this tells about one registration, so a test
    /// can check that one observation was freed while others run. Safe to read from any thread.
    package var isActive: Bool {
        hub.isRegistered(id)
    }
}
