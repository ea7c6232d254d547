import Foundation
import StrataAssets
import StrataSQLite
import Synchronization

extension SyncEngine {
    /// Sends every local change committed before the call: saves and deletes, in batches
    /// under the cloud's limits, with conflicts merged and resent.
    ///
    /// - Throws: transient `CloudError`s (worth retrying later: the network, the service's
    ///   load, the account); every other failure as a ``SyncEngineError``:
    ///   ``SyncEngineError/sendFailed(_:)`` names each record the cloud refused for good, whether
    ///   it refused them one by one or the whole request (a full quota,
    ///   `CloudError/quotaExceeded`, for every record of the batch; see
    ///   ``SyncEngineError/isQuotaExceeded``), and ``SyncEngineError/sendStalled(pendingCount:records:lastFailure:)``
    ///   when a send stops making progress. The same error reaches ``SyncEngineStatus/lastError``
    ///   and the delegate's ``SyncEngineDelegate/syncEngine(_:sendFailed:)``. Nothing is
    ///   dropped on failure: the changes stay pending.
    public func sendChanges() async throws {
        try await work.run { try await self.performSend() }
    }

    func performSend() async throws {
        updateStatus { $0.isSendingChanges = true }
        do {
            let pending = try await send()
            if pending == 0, resyncSendingMayBeSet.load(ordering: .acquiring) { try await forgetResyncSending() }
            updateStatus {
                $0.isSendingChanges = false; $0.pendingCount = pending; $0.lastError = nil; $0.isOverQuota = false
            }
        } catch is CancellationError {
            logger.notice("sending cancelled")
            updateStatus { $0.isSendingChanges = false }
            throw CancellationError()
        } catch {
            logger.error("sending failed: \(error)")
            let overQuota = (error as? SyncEngineError)?.isQuotaExceeded == true
            updateStatus {
                $0.isSendingChanges = false; $0.lastError = error
                if overQuota { $0.isOverQuota = true }
            }
            if let failure = error as? SyncEngineError, let delegate {
                await SynchronizationContext.$isSynchronizing.withValue(false) {
                    await delegate.syncEngine(self, sendFailed: failure)
                }
            }
            throw error
        }
    }

    /// A resync's sends are done once one leaves nothing pending (``EngineState/resyncSending``).
    /// Looked at once per engine after that, not on every push.
    private func forgetResyncSending() async throws {
        try await ChangeCapture.withoutCapture {
            try await self.database.write { db in
                // Nothing written when the key is not there: a transaction that changes no page
                // commits without touching the file.
                try EngineState.set(EngineState.resyncSending, to: nil, in: db)
            }
        }
        resyncSendingMayBeSet.store(false, ordering: .releasing)
    }

    /// Moves the changes committed so far from the change log into the records' metadata,
    /// without sending: what every send starts with. Afterwards ``SyncMetadata`` shows each
    /// changed row's `pendingOperation` and `userModificationTime`, which tests inspect; the
    /// records go out with the next send as they would have.
    ///
    /// - Throws: ``SyncEngineError/accountUnavailable(_:)`` without an account (the zone a
    ///   record goes to belongs to the user); database errors.
    public func drainChangeLog() async throws {
        try await markedAsEngine {
            let user = try await availableUser()
            try await drainChangeLog(into: defaultZone(for: user))
        }
    }

    func drainChangeLog(into zone: CloudZoneID) async throws {
        let schema = self.schema
        let node = deviceID
        let (policies, clock) = (columnPolicies, self.clock)
        // The transaction that finds nothing left to drain also deletes what the ones before it
        // drained (they committed first, as ``ChangeLogDrain`` requires): one transaction fewer
        // on every send, the push path's included.
        while try await database.write({ db in
            let drained = try ChangeLogDrain.drainBatch(
                in: db, schema: schema, zone: zone, node: node, policies: policies, clock: clock)
            if !drained {
                try ChangeLogDrain.removeDrained(in: db)
                try self.persistClock(in: db)
            }
            return drained
        }) {}
    }

    /// What a send finds before its first batch, read in the transaction that drains.
    struct SendStart {
        /// Entries left to drain as the send goes (``DrainWhileSending``); 0 when it drained whole.
        var undrained = 0
        /// The log's last entry when the send started, while it drains as it goes.
        var logEnd: Int64?
        var zoneCreated = false
        /// What waits in each zone, drained entries included.
        var pendingByZone: [CloudZoneID: Int] = [:]
        /// Shared roots this participant deleted: their shares to leave first.
        var sharesToLeave: [DeletedSharedRoot] = []
    }

    /// Starts a send: a long log drains its first stretch only, to drain the rest while the
    /// send goes (``DrainWhileSending``); any other drains whole first. The same access reads
    /// whether the zone exists, what waits in each zone and which shares to leave.
    ///
    /// A short log (a push) drains in the transaction that checks the log: one access before
    /// the first batch where there were five (a check, the drain, the drained entries'
    /// deletion, the shares, the zone and counts). Its entries leave the log in the send's
    /// clean-up, after the request, where the drain's second transaction (``ChangeLogDrain``)
    /// costs the push nothing; a send that ends before it leaves them to the next drain, which
    /// deletes them without applying them again.
    private func startSending(into zone: CloudZoneID, user: String) async throws -> SendStart {
        let stretch = DrainWhileSending.stretch(batchSize: configuration.batchSize)
        let (schema, node, policies, clock) = (self.schema, deviceID, columnPolicies, self.clock)
        let zoneKey = EngineState.zoneCreated(zone)
        @Sendable func read(_ start: inout SendStart, in db: Database) throws {
            start.zoneCreated = try EngineState.value(zoneKey, in: db) != nil
            start.pendingByZone = try RecordMetadata.pendingCountsByZone(in: db)
            start.sharesToLeave = try Self.deletedSharedRoots(user: user, in: db)
        }
        let started = try await database.write { db -> SendStart? in
            var start = SendStart()
            if try DrainWhileSending.applies(stretch: stretch, in: db) {
                let logEnd = try ChangeLog.lastSequence(in: db)
                start.logEnd = logEnd
                _ = try self.drainStretch(into: zone, through: logEnd, in: db)
                start.undrained = try ChangeLogDrain.undrainedCount(in: db)
            } else {
                _ = try ChangeLogDrain.drainBatch(in: db, schema: schema, zone: zone, node: node, policies: policies, clock: clock)
                try self.persistClock(in: db)
                if try ChangeLogDrain.hasUndrained(in: db) { return nil }
            }
            try read(&start, in: db)
            return start
        }
        if let started { return started }
        // Longer than a drain's transaction, and not drained as the send goes.
        try await drainChangeLog(into: zone)
        return try await readOnWriter { db in
            var start = SendStart()
            try read(&start, in: db)
            return start
        }
    }

    /// Drains the next stretch of a long log, in the caller's transaction; returns whether
    /// entries are left to drain so. `logEnd`: the log's last entry when the send started.
    ///
    /// An entry past it is the app's, written during the send: the record it changed may be
    /// drained already, and a batch reading that row would carry part of the app's
    /// transaction without the rest, still far down the log. The log is then drained whole,
    /// as a send did before it drained as it went, and the send stops draining so.
    private func drainStretch(into zone: CloudZoneID, through logEnd: Int64, in db: Database) throws -> Bool {
        if try ChangeLog.lastSequence(in: db) > logEnd {
            try ChangeLogDrain.drainAll(in: db, schema: schema, zone: zone, node: deviceID, policies: columnPolicies, clock: clock)
            try persistClock(in: db)
            return false
        }
        _ = try ChangeLogDrain.drainBatch(
            in: db, schema: schema, zone: zone, node: deviceID, policies: columnPolicies, clock: clock,
            limit: DrainWhileSending.stretch(batchSize: configuration.batchSize), wholeTransactions: true)
        try persistClock(in: db)
        return try ChangeLogDrain.hasUndrained(in: db)
    }

    /// Returns how many records still wait, counted in the send's last access.
    private func send() async throws -> Int {
        let user = try await availableUser()
        let zone = defaultZone(for: user)
        let schema = self.schema
        let node = deviceID
        let start = try await startSending(into: zone, user: user)
        let undrained = start.undrained
        // While the send drains the log as it goes, the log's last entry when it started: the
        // answers to each batch accepted whole bring the next stretch, and an empty batch
        // drains on; any other answer, or a write of the app's, drains the rest (nil then).
        var draining = undrained > 0 ? start.logEnd : nil
        // Another device may have rotated a key since the last send.
        keyring?.recheckCurrentKeys(now: configuration.physicalTime())
        var pendingByZone = start.pendingByZone
        if !start.sharesToLeave.isEmpty {
            try await leaveShares(of: start.sharesToLeave)
            // Leaving forgot the roots' subtrees, pending records among them.
            pendingByZone = try await readOnWriter { db in try RecordMetadata.pendingCountsByZone(in: db) }
        }
        let cloud = self.cloud.privateDatabase
        let zoneKey = EngineState.zoneCreated(zone)
        if !start.zoneCreated {
            try await cloud.saveZones([zone])
            try await database.write { db in try EngineState.set(zoneKey, to: "1", in: db) }
        }
        var builder = OutgoingChanges(schema: schema)
        builder.policies = columnPolicies
        builder.blobAssetThreshold = configuration.blobAssetThreshold
        let outgoing = builder
        var waiting = pendingByZone
        // Each entry left in the log is a record of its own (``DrainWhileSending/applies(stretch:in:)``),
        // counted in the default zone until drained (a child of a shared record goes to its
        // parent's zone, and the totals grow there as it is sent).
        if undrained > 0 { waiting[zone, default: 0] += undrained }
        let pendingAtStart = startSendProgress(waiting)
        defer { finishSendProgress() }
        var plan = SendPlan(batchSize: configuration.batchSize, pending: pendingAtStart)
        // One batch travels while the engine records the answers to the one before and builds
        // the ones after (`batch(following:)`): the device's bookkeeping and the cloud's work
        // overlap. Batches after it go at once, beside the one in flight, while none of their
        // records is a parent or child of a record travelling (``independent(_:of:)``), up to
        // ``SyncEngineConfiguration/maximumBatchesInFlight`` at a time: the requests then
        // travel together, and the cloud may take them in any order, so a long round trip is
        // waited once for several batches rather than once each. A batch that holds a child of
        // one travelling goes only once that one was answered and accepted whole, so a parent
        // always reaches the cloud before its children.
        let depth = max(1, configuration.maximumBatchesInFlight)
        var inFlight: BatchInFlight?
        // Launched after `inFlight`, before its answer: oldest first, answers taken in that order.
        var ahead: [BatchInFlight] = []
        // Waits for the answers of every batch still travelling, without recording them: a send
        // that ends with an error leaves their records pending, and the next send finds them in
        // the cloud (a conflict merged with equal versions).
        func abandonAhead() async {
            let abandoned = ahead
            ahead = []
            for batch in abandoned { _ = await batch.answer() }
        }
        sending: while true {
            if inFlight == nil {
                let (batchLimit, leftOut) = (plan.limit, plan.leftOut)
                let built = try await database.write { db in try outgoing.nextBatch(limit: batchLimit, excluding: leftOut, in: db) }
                if built.isEmpty, let through = draining {
                    let goesOn = try await database.write { db in try self.drainStretch(into: zone, through: through, in: db) }
                    draining = goesOn ? through : nil
                    continue
                }
                let heldBefore = plan.heldBack.count
                let offered = Self.admitted(built, by: &plan)
                // All held back behind a parent that failed: built again without them, which
                // leaves out more each time. A batch that held back nothing new would come back
                // the same: the send stops, naming its records.
                if offered.isEmpty && !built.isEmpty {
                    guard plan.heldBack.count > heldBefore else {
                        let pending = try await readOnWriter { db in try RecordMetadata.pendingCount(in: db) }
                        throw SyncEngineError.sendStalled(
                            pendingCount: pending, records: built.map(\.metadata.name.text), lastFailure: plan.lastFailure)
                    }
                    continue
                }
                guard case .send = plan.next(offered: offered.map(\.metadata.name.text)) else { break sending }
                inFlight = launch(offered, user: user, cloud: cloud)
            }
            guard let current = inFlight else { break sending }
            let items = current.items
            // The next batch when it may not travel beside those in flight: it goes once the
            // answer to this one accepted it whole, if nothing else travels then.
            var following: [OutgoingChanges.Item]?
            // A batch under the limit mostly took everything pending (or stopped before a
            // transaction too large to join it): nothing is built behind it, so a small send,
            // the push path, pays for no second transaction. The next round finds the rest.
            var lastFull = (ahead.last?.items ?? items).count >= plan.limit
            while lastFull && ahead.count + 1 < depth && following == nil {
                let travelling = [current] + ahead
                let built: [OutgoingChanges.Item]?
                do {
                    let batchLimit = plan.limit
                    let names = travelling.reduce(plan.leftOut) { $0.union($1.names) }
                    built = try await database.write { db in try outgoing.batch(following: names, limit: batchLimit, in: db) }
                        .map { Self.admitted($0, by: &plan) }
                } catch {
                    // Their answers are not recorded: the records stay pending, and the next
                    // send finds them in the cloud (a conflict merged with equal versions).
                    _ = await current.answer()
                    await abandonAhead()
                    throw error
                }
                // Nil when a record must first move to another zone: made between requests.
                guard let built, !built.isEmpty else { break }
                guard travelling.allSatisfy({ Self.independent(built, of: $0.items) }) else {
                    following = built
                    break
                }
                guard case .send = plan.next(offered: built.map(\.metadata.name.text)) else { break }
                ahead.append(launch(built, user: user, cloud: cloud))
                lastFull = built.count >= plan.limit
            }
            inFlight = nil
            // The batches launched beside this one, once this one's answer is taken, in order:
            // their answers are recorded, with the zone and the fetch they need
            // (``takeAnswer(to:plan:draining:needs:zone:node:)``). Whether the send goes on.
            // A batch whose answer fails (a transient error) does not keep the ones after it
            // from being recorded: what the cloud accepted of them is not sent again. The
            // first failure is thrown once every answer was taken. A zone or a fetch their
            // answers need (or `needed`, the batch waited on's) comes once every answer was
            // taken, when nothing travels, and once for all of them.
            func settleAhead(needing needed: AnswerNeeds = AnswerNeeds()) async throws -> Bool {
                var goesOn = true
                var failure: (any Error)?
                var needs = needed
                while !ahead.isEmpty {
                    let batch = ahead.removeFirst()
                    do {
                        if try await !takeAnswer(to: batch, plan: &plan, draining: &draining, needs: &needs, zone: zone, node: node) {
                            goesOn = false
                        }
                    } catch {
                        failure = failure ?? error
                    }
                }
                if let failure { throw failure }
                if needs.zone { try await cloud.saveZones([zone]) }
                if needs.fetch { try await performFetchBody() }
                return goesOn
            }
            let result: CloudModifyResult
            let encoding: Task<EncodedRecords, Never>
            switch await current.answer() {
            case .success(let answered):
                (result, encoding) = (answered.result, answered.encoding)
            case .failure(CloudError.limitExceeded) where items.count > 1:
                _ = plan.record(.limitExceeded, of: items.map(\.metadata.name.text))
                logger.info("request over the cloud's limits: retrying with \(plan.limit) records")
                guard try await settleAhead() else { break sending }
                continue
            case .failure(CloudError.zoneNotFound):
                guard try await settleAhead() else { break sending }
                try await cloud.saveZones([zone])
                continue
            case .failure(let error):
                // The batches beside are answered and recorded before the send ends with this
                // failure: what the cloud accepted of them is not sent again. (After a transient
                // failure here, a refusal of a batch beside is met again by the next send.)
                do {
                    _ = try await settleAhead()
                } catch is CancellationError {
                } catch {
                    logger.error("recording the answers to the batches sent beside a failed one failed: \(error)")
                }
                guard let refusal = error as? CloudError, !refusal.isTransient else { throw error }
                // Refused whole (a full quota, a lone record over the limits, a permission):
                // the same shape as records refused one by one, naming each, beside the
                // records refused for good before (the batches beside included).
                var failures = plan.permanentFailures.dictionary
                for item in items where failures[item.metadata.name.text] == nil { failures[item.metadata.name.text] = refusal }
                throw SyncEngineError.sendFailed(failures)
            }
            if !ahead.isEmpty || !(following ?? []).isEmpty, Self.acceptedWhole(result, items) {
                // Every record accepted: the next batch goes (or has gone) before these answers
                // are written.
                let goesOn = plan.record(
                    .recorded(progress: items.count, needsZone: false, needsFetch: false, permanentFailures: [:], firstFailure: nil),
                    of: items.map(\.metadata.name.text))
                if !ahead.isEmpty {
                    // A batch that could not travel beside them is built again once it can.
                    inFlight = ahead.removeFirst()
                } else if let following, goesOn, case .send = plan.next(offered: following.map(\.metadata.name.text)) {
                    inFlight = launch(following, user: user, cloud: cloud)
                }
                let outcome: SendOutcome
                do {
                    outcome = try await recordAnswers(
                        result, of: items, encoded: await encoding.value, zone: zone, node: node, draining: &draining)
                } catch {
                    _ = await inFlight?.answer()
                    await abandonAhead()
                    throw error
                }
                logEvents(outcome.events, title: "sent")
                recordSendProgress(outcome)
                if inFlight == nil && draining == nil { break sending }
                continue
            }
            let outcome: SendOutcome
            do {
                outcome = try await recordAnswers(
                    result, of: items, encoded: await encoding.value, zone: zone, node: node, draining: &draining)
            } catch {
                await abandonAhead()
                throw error
            }
            logEvents(outcome.events, title: "sent")
            recordSendProgress(outcome)
            plan.failedBeforeReachingTheCloud(outcome.failedBeforeReachingTheCloud)
            // Merges, a zone or a fetch come once nothing travels, and every answer that
            // arrived is written.
            let aheadGoesOn = try await settleAhead(needing: AnswerNeeds(zone: outcome.needsZone, fetch: outcome.needsFetch))
            let goesOn = plan.record(
                .recorded(
                    progress: outcome.progress, needsZone: outcome.needsZone, needsFetch: outcome.needsFetch,
                    permanentFailures: outcome.failures, firstFailure: Self.firstFailure(in: result, of: items)),
                of: items.map(\.metadata.name.text))
            if !goesOn || !aheadGoesOn { break sending }
        }
        // Entries drained while answers were recorded leave the log now, in the first access
        // of the moves' clean-up, which ends by counting what still waits.
        var pending = try await deleteOldCopiesOfMovedRecords(
            user: user, limit: plan.limit, rounds: plan.maximumRounds, removingDrainedEntries: true)
        // A send stopped before it drained the whole log: what it left there waits too.
        if draining != nil { pending += try await readOnWriter { db in try ChangeLogDrain.undrainedCount(in: db) } }
        switch plan.ending {
        case .done: return pending
        case .stalled(let records, let lastFailure):
            throw SyncEngineError.sendStalled(pendingCount: pending, records: records, lastFailure: lastFailure)
        case .failed(let failures): throw SyncEngineError.sendFailed(failures)
        }
    }

    /// A batch sent and not answered yet: its uploads and its request run in a task of their
    /// own, so the engine works on meanwhile.
    struct BatchInFlight {
        let items: [OutgoingChanges.Item]
        let names: ExactNames
        let task: Task<Answered, any Error>

        /// The cloud's answer, with the metadata JSON of the records it accepted, written in a
        /// task of its own from the moment the answer arrives (``EncodedRecords``): the next
        /// request does not wait for it, and the engine's connection only binds it.
        struct Answered: Sendable {
            let result: CloudModifyResult
            let encoding: Task<EncodedRecords, Never>
        }

        /// The cloud's answer; cancelling the waiting task cancels the request.
        func answer() async -> Result<Answered, any Error> {
            await withTaskCancellationHandler {
                await task.result
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// Starts sending `items`: the assets and large BLOBs they refer to, then the records.
    private func launch(_ items: [OutgoingChanges.Item], user: String, cloud: any CloudDatabase) -> BatchInFlight {
        let schema = self.schema
        let database = self.database
        // A task inherits the task-local values: the request is still the engine's own.
        let task = Task {
            let records = items.compactMap(\.record)
            for (recordZone, zoneRecords) in Dictionary(grouping: records, by: \.id.zone) {
                try await AssetTransfer(database: database, cloud: cloud, zone: recordZone).upload(
                    AssetTransfer.references(in: zoneRecords),
                    blobs: try await AssetTransfer.largeBlobs(in: zoneRecords, schema: schema, database: database))
            }
            let result = try await self.modifyRecords(
                saving: records, deleting: items.filter { $0.record == nil }.map(\.metadata.recordID), user: user)
            let accepted = result.saveResults.values.compactMap { try? $0.get() }
            return BatchInFlight.Answered(result: result, encoding: Task { EncodedRecords(accepted, withVersions: false) })
        }
        return BatchInFlight(items: items, names: ExactNames(items.map(\.metadata.name.text)), task: task)
    }

    /// Takes the answer to a batch sent beside another (``independent(_:of:)``), once that
    /// other one's was taken, and records it as any batch's: every answer written, the zone
    /// and the fetch they need noted in `needs` (made once every answer was taken, when nothing
    /// travels), the plan told. Over the limits, the plan halves its batches and the records go
    /// again; without its zone, the zone is made and the records go again; refused whole for
    /// good (a full quota, a
    /// permission), its records are the plan's permanent failures and the send stops, to report
    /// them in `sendFailed`; a transient failure is thrown. Returns whether the send goes on.
    private func takeAnswer(
        to batch: BatchInFlight, plan: inout SendPlan, draining: inout Int64?, needs: inout AnswerNeeds, zone: CloudZoneID, node: String
    ) async throws -> Bool {
        let names = batch.items.map(\.metadata.name.text)
        switch await batch.answer() {
        case .success(let answered):
            let outcome = try await recordAnswers(
                answered.result, of: batch.items, encoded: await answered.encoding.value, zone: zone, node: node, draining: &draining)
            logEvents(outcome.events, title: "sent")
            recordSendProgress(outcome)
            plan.failedBeforeReachingTheCloud(outcome.failedBeforeReachingTheCloud)
            needs.zone = needs.zone || outcome.needsZone
            needs.fetch = needs.fetch || outcome.needsFetch
            return plan.record(
                .recorded(
                    progress: outcome.progress, needsZone: outcome.needsZone, needsFetch: outcome.needsFetch,
                    permanentFailures: outcome.failures, firstFailure: Self.firstFailure(in: answered.result, of: batch.items)),
                of: names)
        case .failure(CloudError.limitExceeded) where names.count > 1:
            return plan.record(.limitExceeded, of: names)
        case .failure(CloudError.zoneNotFound):
            // The zone is gone (deleted from another device, or never made), as for the batch
            // the send waited on first: made again, and the records, still pending, go again.
            // Reported as refused for good, they ended the send with `sendFailed` (an outside
            // review found it, with a limit or a conflict in the request before).
            needs.zone = true
            return plan.record(
                .recorded(progress: 0, needsZone: true, needsFetch: false, permanentFailures: [:], firstFailure: nil), of: names)
        case .failure(let error as CloudError) where !error.isTransient:
            // Refused whole (a full quota, a permission), as a batch travelling alone can be:
            // each record failed with the error, and the send stops and reports them in
            // `sendFailed`, with every other record refused for good.
            _ = plan.record(
                .recorded(
                    progress: 0, needsZone: false, needsFetch: false,
                    permanentFailures: ExactKeyed(names.map { ($0, error) }, uniquingKeysWith: { first, _ in first }),
                    firstFailure: names.first.map { "\($0): \(error)" }),
                of: names)
            return false
        case .failure(let error):
            throw error
        }
    }

    /// Whether `following` may travel beside `current`, before its answer: no record of
    /// either is the parent, as sent or as the cloud last knew it, of a record of the other.
    /// The cloud may then take the two requests in either order, and no save arrives before
    /// its parent, no delete of a parent before its children leave it.
    static func independent(_ following: [OutgoingChanges.Item], of current: [OutgoingChanges.Item]) -> Bool {
        var names = ExactNames()
        var parents = ExactNames()
        for item in current {
            names.insert(item.metadata.name.text)
            if let parent = item.record?.parent?.name { parents.insert(parent) }
            if let parent = item.metadata.parent { parents.insert(parent.text) }
        }
        for item in following {
            if parents.contains(item.metadata.name.text) { return false }
            if let parent = item.record?.parent?.name, names.contains(parent) { return false }
            if let parent = item.metadata.parent, names.contains(parent.text) { return false }
        }
        return true
    }

    /// The items of a batch the plan lets go (``SendPlan/admit(_:)``), in their order.
    static func admitted(_ items: [OutgoingChanges.Item], by plan: inout SendPlan) -> [OutgoingChanges.Item] {
        let names = plan.admit(items.map { ($0.metadata.name.text, $0.record?.parent?.name) })
        return items.filter { names.contains($0.metadata.name.text) }
    }

    /// Whether the cloud accepted every save and delete of a batch.
    static func acceptedWhole(_ result: CloudModifyResult, _ items: [OutgoingChanges.Item]) -> Bool {
        items.allSatisfy { item in
            let id = item.metadata.recordID
            if item.record == nil {
                if case .success? = result.deleteResults[id] { return true }
            } else if case .success? = result.saveResults[id] {
                return true
            }
            return false
        }
    }

    /// Writes the answers to a batch, with what merging the server's copies needs (their
    /// assets and large BLOBs, downloaded first), in one transaction.
    ///
    /// The log is drained first, whole: merging a server's copy must see every local edit
    /// committed before, or an older value could win over an edit still in the log. While a
    /// send drains a long log as it goes (`draining`, ``DrainWhileSending``), answers that
    /// accepted every record merge nothing and bring only the log's next stretch; `draining`
    /// becomes nil once the log is drained whole.
    private func recordAnswers(
        _ result: CloudModifyResult, of items: [OutgoingChanges.Item], encoded: EncodedRecords, zone: CloudZoneID, node: String,
        draining: inout Int64?
    ) async throws -> SendOutcome {
        let cloud = self.cloud.privateDatabase
        // Server copies to merge may refer to content this device lacks.
        let serverCopies = result.saveResults.values.compactMap { answer -> CloudRecord? in
            if case .failure(.serverRecordChanged(let record)) = answer { return record }
            return nil
        }
        let schema = self.schema
        var arrivedAssets: [StoredAsset] = []
        var arrivedBlobs: [String: Data] = [:]
        for (recordZone, copies) in Dictionary(grouping: serverCopies, by: \.id.zone) {
            let transfer = AssetTransfer(database: database, cloud: cloud, zone: recordZone)
            arrivedAssets += try await transfer.download(AssetTransfer.references(in: copies, assetColumnsOf: schema))
            arrivedBlobs.merge(try await transfer.downloadBlobs(in: copies, schema: schema)) { $1 }
        }
        let (assets, blobs) = (arrivedAssets, arrivedBlobs)
        let drainsStretch = Self.acceptedWhole(result, items) ? draining : nil
        let outcome = try await ChangeCapture.withoutCapture {
            try await self.database.write { db in
                var drainsOn = false
                if let through = drainsStretch {
                    drainsOn = try self.drainStretch(into: zone, through: through, in: db)
                } else {
                    try ChangeLogDrain.drainAll(
                        in: db, schema: schema, zone: zone, node: node, policies: self.columnPolicies, clock: self.clock)
                }
                for asset in assets { try db.insertStoredAsset(asset) }
                var outcome = try self.record(result, of: items, blobs: blobs, encoded: encoded, in: db)
                outcome.drainsOn = drainsOn
                return outcome
            }
        }
        if !outcome.drainsOn { draining = nil }
        return outcome
    }

    /// The first refusal among a batch's answers, for ``SyncEngineError/sendStalled(pendingCount:records:lastFailure:)``.
    private static func firstFailure(in result: CloudModifyResult, of items: [OutgoingChanges.Item]) -> String? {
        for item in items {
            let answer =
                item.record == nil
                ? result.deleteResults[item.metadata.recordID].map { $0.map { _ in () } }
                : result.saveResults[item.metadata.recordID].map { $0.map { _ in () } }
            if case .failure(let error)? = answer { return "\(item.metadata.name.text): \(error)" }
        }
        return nil
    }

    /// Deletes the copies records left in their old zone when they moved to another one
    /// (``ZoneMoves``), once the copy in the new zone is sent; children before parents.
    ///
    /// - Parameter removingDrainedEntries: first removes the change log's drained entries, in
    ///   the same access (one transaction fewer at the end of every send).
    /// - Returns: how many records still wait to be sent, counted in the last access.
    private func deleteOldCopiesOfMovedRecords(
        user: String, limit: Int, rounds: Int, removingDrainedEntries: Bool = false
    ) async throws -> Int {
        for round in 0..<rounds {
            let removeDrained = removingDrainedEntries && round == 0
            let (ids, pending) = try await database.write { db in
                if removeDrained { try ChangeLogDrain.removeDrained(in: db) }
                let ids = try ZoneMoves.pendingDeletes(limit: limit, in: db).filter { id in
                    guard let name = RecordName(id.name) else { return true }
                    return try RecordMetadata.fetch(name, in: db)?.pendingOperation == nil
                }
                return (ids, ids.isEmpty ? try RecordMetadata.pendingCount(in: db) : 0)
            }
            guard !ids.isEmpty else { return pending }
            let result = try await modifyRecords(saving: [], deleting: ids, user: user)
            let progress = try await database.write { db in
                var progress = 0
                for id in ids {
                    switch result.deleteResults[id] {
                    case .success?, .failure(.unknownItem)?, .failure(.zoneNotFound)?:
                        try ZoneMoves.forget(id, in: db)
                        progress += 1
                    case .failure(.batchRequestFailed)?, nil:
                        break
                    case .failure(.referenceViolation)?:
                        // Someone added a child to the old copy meanwhile: it stays until the
                        // child is gone.
                        self.logger.warning("the old copy of \(id.name) in \(id.zone) still has children: not deleted yet")
                    case .failure(let error)?:
                        if error.isTransient { throw error }
                        self.logger.warning("the old copy of \(id.name) in \(id.zone) cannot be deleted: \(error)")
                        try ZoneMoves.forget(id, in: db)
                        progress += 1
                    }
                }
                return progress
            }
            if progress == 0 { break }
        }
        return try await readOnWriter { db in try RecordMetadata.pendingCount(in: db) }
    }

    /// What the answers to batches taken one after another need once nothing travels.
    struct AnswerNeeds {
        var zone = false
        var fetch = false
    }

    /// What one batch's answers changed.
    struct SendOutcome: Sendable {
        var progress = 0
        var needsZone = false
        var needsFetch = false
        var failures = ExactKeyed<CloudError>()
        /// Among ``failures``, the saves of records the cloud never had: their children wait.
        var failedBeforeReachingTheCloud = ExactNames()
        var events: [SyncEvent] = []
        /// Records the cloud accepted, per zone: what progress counts as sent.
        var accepted: [CloudZoneID: Int] = [:]
        /// Whether the log still holds entries the send drains as it goes (``DrainWhileSending``).
        var drainsOn = false
    }

    /// Records the cloud's answers to a batch, in one transaction.
    func record(
        _ result: CloudModifyResult, of items: [OutgoingChanges.Item], blobs: [String: Data], encoded: EncodedRecords = EncodedRecords(),
        in db: Database
    ) throws -> SendOutcome {
        var outcome = SendOutcome()
        var incoming = incomingChanges()
        incoming.blobs = blobs
        for item in items {
            let id = item.metadata.recordID
            let name = item.metadata.name
            if item.record != nil {
                guard let answer = result.saveResults[id] else { continue }
                switch answer {
                case .success(let saved):
                    let json = encoded[saved]?.record
                    if try !RecordMetadata.recordSaved(name, as: saved, json: json, revision: item.revision, in: db) {
                        // Its metadata went meanwhile: written whole again.
                        var metadata = item.metadata
                        metadata.setServerRecord(saved, json: json)
                        metadata.parent = saved.parent.flatMap { RecordName($0.name) }
                        metadata.serverChangeTag = saved.changeTag
                        if metadata.pendingOperation == .save && metadata.pendingRevision == item.revision {
                            metadata.pendingOperation = nil
                        }
                        try metadata.save(in: db)
                    }
                    outcome.progress += 1
                    outcome.accepted[id.zone, default: 0] += 1
                    outcome.events.append(SyncEvent(action: .sent, recordType: name.table, recordName: id.name))
                case .failure(let error):
                    try handleSaveFailure(error, item: item, incoming: incoming, outcome: &outcome, in: db)
                }
            } else {
                guard let answer = result.deleteResults[id] else { continue }
                switch answer {
                case .success:
                    if var metadata = try RecordMetadata.fetch(name, in: db) {
                        if metadata.pendingOperation == .delete && metadata.pendingRevision == item.revision {
                            try RecordMetadata.delete(name, in: db)
                        } else {
                            // Inserted again after the delete was built: the next save is new.
                            metadata.serverChangeTag = nil
                            try metadata.save(in: db)
                        }
                    }
                    outcome.progress += 1
                    outcome.accepted[id.zone, default: 0] += 1
                    outcome.events.append(SyncEvent(action: .deleted, recordType: name.table, recordName: id.name))
                case .failure(.referenceViolation):
                    // The cloud still holds children under this record. Those whose changes
                    // wait here behind it (moved to another parent or deleted after it: their
                    // place is their last change) join its transaction, so they go with it in
                    // one request. Any others this device has not seen are fetched, so the
                    // parent's ON DELETE reaches them, then the delete goes again.
                    // Those already in its transaction but not yet sent (it is larger than a
                    // request) go first, the parent's delete behind them.
                    if try RecordMetadata.advancePendingChildren(of: name, to: item.metadata.pendingTransaction, in: db) > 0
                        || RecordMetadata.postponeDeleteBehindPendingChildren(
                            of: name, sentWith: items.map(\.metadata.name), in: db)
                    {
                        outcome.progress += 1
                    } else {
                        outcome.needsFetch = true
                    }
                case .failure(.batchRequestFailed), .failure(.zoneNotFound):
                    break
                case .failure(.permissionFailure)
                where item.metadata.zone.owner != (try EngineState.value(EngineState.userName, in: db) ?? ""):
                    // A read-only participant's delete: the record comes back.
                    try restoreServerCopy(of: item, incoming: incoming, in: db)
                    outcome.progress += 1
                    outcome.events.append(SyncEvent(action: .failed, recordType: name.table, recordName: id.name))
                case .failure(let error):
                    if error.isTransient { throw error }
                    outcome.failures[id.name] = error
                    outcome.events.append(SyncEvent(action: .failed, recordType: name.table, recordName: id.name))
                }
            }
        }
        try persistClock(in: db)
        return outcome
    }

    private func handleSaveFailure(
        _ error: CloudError, item: OutgoingChanges.Item, incoming: IncomingChanges, outcome: inout SendOutcome, in db: Database
    ) throws {
        let name = item.metadata.name
        switch error {
        case .serverRecordChanged(let server):
            // Merge the server's copy; what the local side wins stays pending and goes next.
            var report = IncomingChanges.Report()
            try incoming.apply(server, in: db, report: &report)
            outcome.progress += 1
            outcome.events.append(SyncEvent(action: .merged, recordType: name.table, recordName: name.text))
        case .zoneNotFound:
            outcome.needsZone = true
        case .unknownItem:
            // Deleted on the server: a local edit beats a remote delete, so save it as new.
            if var metadata = try RecordMetadata.fetch(name, in: db) {
                metadata.serverChangeTag = nil
                try metadata.save(in: db)
            }
            outcome.progress += 1
            outcome.events.append(SyncEvent(action: .retried, recordType: name.table, recordName: name.text))
        case .supersededByDelete:
            try applyDeleteThatSuperseded(item, incoming: incoming, outcome: &outcome, in: db)
        case .referenceViolation:
            try handleMissingParent(item: item, outcome: &outcome, in: db)
        case .batchRequestFailed:
            break
        case .permissionFailure where item.metadata.zone.owner != (try EngineState.value(EngineState.userName, in: db) ?? ""):
            // The owner made this user's permission read-only: the cloud's copy comes back.
            try restoreServerCopy(of: item, incoming: incoming, in: db)
            outcome.progress += 1
            outcome.events.append(SyncEvent(action: .failed, recordType: name.table, recordName: name.text))
            logger.warning("\(name.text) is shared read-only with this user: the local change was undone")
        default:
            if error.isTransient { throw error }
            outcome.failures[name.text] = error
            if item.metadata.serverChangeTag == nil { outcome.failedBeforeReachingTheCloud.insert(name.text) }
            outcome.events.append(SyncEvent(action: .failed, recordType: name.table, recordName: name.text))
        }
    }

    /// The cloud had applied this save before another device deleted the record: the save's
    /// first answer was lost, and it went again. The delete stands here too, applied as the
    /// fetch would have applied it had that answer arrived (its `ON DELETE` reaching children
    /// as a remote delete's does). A change made since the batch was built carries newer
    /// versions: it goes again, as new, and wins over the delete.
    private func applyDeleteThatSuperseded(
        _ item: OutgoingChanges.Item, incoming: IncomingChanges, outcome: inout SendOutcome, in db: Database
    ) throws {
        let name = item.metadata.name
        outcome.progress += 1
        guard var metadata = try RecordMetadata.fetch(name, in: db), metadata.zone == item.metadata.zone else { return }
        guard metadata.pendingOperation == .save, metadata.pendingRevision == item.revision else {
            if metadata.pendingOperation == .save {
                metadata.serverChangeTag = nil
                try metadata.save(in: db)
                outcome.events.append(SyncEvent(action: .retried, recordType: name.table, recordName: name.text))
            }
            return
        }
        // Two saves have the same shape and are not retries. A record moved back into a zone
        // it was moved out of (under a parent moved between zones) meets the tombstone its own
        // move left there, with the same versions: the cloud's last copy of it is in another
        // zone. And a resync keeps every local row, whatever the cloud deleted. Their fields
        // are stamped anew, and they go again, newer than the tombstone. (A move whose own
        // answer was lost before a delete there is told apart from the first by nothing the
        // device keeps; it goes again too, as every such save did before.)
        let movedBack = try metadata.serverRecord().map { $0.id.zone != metadata.zone } ?? false
        if try movedBack || EngineState.value(EngineState.resyncSending, in: db) != nil {
            let now = clock.next()
            var fields = Set(metadata.fieldVersions.keys)
            if let sent = item.record { fields.formUnion(sent.fieldVersions.keys) }
            for field in fields { metadata.fieldVersions[field] = now }
            metadata.serverChangeTag = nil
            try metadata.save(in: db)
            outcome.events.append(SyncEvent(action: .retried, recordType: name.table, recordName: name.text))
            return
        }
        // As answered (the cloud had it), then deleted as the fetch deletes.
        metadata.pendingOperation = nil
        try metadata.save(in: db)
        var report = IncomingChanges.Report()
        try incoming.applyDeletion(item.metadata.recordID, in: db, report: &report)
        outcome.events.append(SyncEvent(action: .deleted, recordType: name.table, recordName: name.text))
        logger.info("\(name.text) was deleted elsewhere after the cloud saved this change (its answer was lost): deleted here too")
    }

    /// Undoes a local change the cloud refused: the row goes back to the last known server
    /// record (re-inserted after a refused delete), and nothing stays pending.
    private func restoreServerCopy(of item: OutgoingChanges.Item, incoming: IncomingChanges, in db: Database) throws {
        guard var metadata = try RecordMetadata.fetch(item.metadata.name, in: db) else { return }
        guard let server = try metadata.serverRecord() else {
            // Never in the cloud: a child added under a read-only record; it goes.
            if let table = schema.table(named: metadata.name.table) {
                try db.execute(
                    sql: "DELETE FROM main.\(table.name.quotedIdentifier) WHERE \(table.primaryKey.quotedIdentifier) = ?",
                    arguments: [metadata.name.primaryKey])
            }
            try RecordMetadata.delete(metadata.name, in: db)
            return
        }
        metadata.pendingOperation = nil
        metadata.fieldVersions = [:]
        try metadata.save(in: db)
        // The refused changes of counters go too: the cloud's lanes are taken as they are.
        try CounterStore.forget(metadata.name, in: db)
        var report = IncomingChanges.Report()
        try incoming.apply(server, in: db, report: &report)
    }

    /// A save failed because the cloud lacks the record's parent. If the parent was never
    /// sent, or has a change waiting, it is sent (again). Otherwise the cloud had it and it was
    /// deleted elsewhere: the foreign key's ON DELETE is applied here, as it was on the device
    /// that deleted the parent, and a fetch brings the parent's deletion.
    private func handleMissingParent(item: OutgoingChanges.Item, outcome: inout SendOutcome, in db: Database) throws {
        let name = item.metadata.name
        guard let table = schema.table(named: name.table), let reference = table.parent,
            let value = item.record?.fields[reference.column], value != .null
        else { return }
        let parentName = RecordName(table: reference.parentTable, primaryKey: value.keyText)
        let knownParent = try RecordMetadata.fetch(parentName, in: db)
        let deletedInCloud = knownParent.map { $0.serverChangeTag != nil && $0.pendingOperation != .save } ?? false
        if try !deletedInCloud && IncomingChanges.rowExists(parentName, schema: schema, in: db) {
            var parent = knownParent ?? RecordMetadata(name: parentName, zone: item.metadata.zone)
            // Progress only when this changes what goes next: a parent already pending goes
            // with its children (``OutgoingChanges``), so its child's refusal says nothing new.
            if parent.pendingOperation == nil {
                parent.pendingOperation = .save
                parent.pendingRevision += 1
                parent.serverChangeTag = nil
                parent.pendingTransaction = item.metadata.pendingTransaction
                try parent.save(in: db)
                outcome.progress += 1
            }
            return
        }
        outcome.needsFetch = true
        let quotedTable = table.name.quotedIdentifier
        let key = table.primaryKey.quotedIdentifier
        let column = reference.column.quotedIdentifier
        switch reference.onDelete {
        case "CASCADE":
            try db.execute(sql: "DELETE FROM main.\(quotedTable) WHERE \(key) = ?", arguments: [name.primaryKey])
            if var metadata = try RecordMetadata.fetch(name, in: db) {
                if metadata.serverChangeTag == nil {
                    try RecordMetadata.delete(name, in: db)
                } else {
                    metadata.pendingOperation = .delete
                    metadata.pendingRevision += 1
                    try metadata.save(in: db)
                }
            }
            outcome.events.append(SyncEvent(action: .deleted, recordType: name.table, recordName: name.text))
        default:
            let defaultSQL =
                reference.onDelete == "SET DEFAULT"
                ? (try String.fetchOne(
                    db, sql: "SELECT dflt_value FROM pragma_table_info(?) WHERE name = ?", arguments: [table.name, reference.column])
                    ?? "NULL")
                : "NULL"
            try db.execute(
                sql: "UPDATE main.\(quotedTable) SET \(column) = (\(defaultSQL)) WHERE \(key) = ?", arguments: [name.primaryKey])
            if var metadata = try RecordMetadata.fetch(name, in: db) {
                metadata.fieldVersions[reference.column] = clock.next()
                metadata.pendingRevision += 1
                metadata.pendingOperation = .save
                try metadata.save(in: db)
            }
            outcome.events.append(SyncEvent(action: .merged, recordType: name.table, recordName: name.text))
        }
        outcome.progress += 1
    }
}
