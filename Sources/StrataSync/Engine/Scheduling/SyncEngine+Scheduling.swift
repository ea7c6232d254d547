import StrataSQLite

extension SyncEngine {
    /// Starts automatic work when the configuration has a ``SyncSchedule``: a send shortly
    /// after start-up and after each commit that logged changes to a synced table, a fetch on every
    /// change hint and poll interval (followed by a send when another process's commits wait),
    /// retries with exponential backoff. Changes committed while
    /// stopped were logged and go out with the first send.
    ///
    /// An idle engine does nothing until a commit, a hint or the next poll: no timer ticks, no
    /// queries. The schedule holds no strong reference to the engine: releasing the engine
    /// stops it.
    public func start() {
        guard !statusStorage.withLock({ $0.isRunning }) else { return }
        updateStatus { $0.isRunning = true }
        guard let schedule = configuration.schedule else { return }
        let signal = self.signal
        let doorbell = signal.makeDoorbell()
        let hints = unmarkedContainer.changeHints()
        let engine = WeakEngine(self)
        // Hints and polls fetch at once (a send's debounce never delays them); a transient
        // failure goes to the schedule's loop, which retries with backoff.
        let hintLoop = Task {
            for await _ in hints {
                guard let working = engine.value else { return }
                await working.scheduledFetch(reason: .hint)
            }
        }
        let pollTimer = Task {
            while true {
                do { try await schedule.clock.sleep(for: schedule.pollInterval) } catch { return }
                guard let working = engine.value else { return }
                await working.scheduledFetch(reason: .poll)
                // Commits another process made ring no bell here: a poll sends what waits,
                // or those writes would wait for this process's own next commit.
                if (try? await working.hasChangesToSend()) == true { signal.ring(.localChange) }
            }
        }
        let loop = Task {
            await Self.runSchedule(schedule, signal: signal, doorbell: doorbell) { engine.value }
        }
        // Changes logged while stopped go out after the send delay, as a commit's would; the
        // first fetch comes with the first hint or poll. Nothing runs before the clock moves.
        signal.ring(.localChange)
        tasks.withLock { $0 += [loop, hintLoop, pollTimer] }
    }

    /// Stops automatic work, and cancels a send or fetch that is running. Local changes keep
    /// being logged, and go out after ``start()``.
    public func stop() {
        let running = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in running { task.cancel() }
        signal.finish()
        work.cancelAll()
        updateStatus { $0.isRunning = false }
    }

    /// The schedule's loop: waits on the doorbell, holding the engine only while it works.
    private static func runSchedule(
        _ schedule: SyncSchedule, signal: ScheduleSignal, doorbell: AsyncStream<Void>,
        engine: @escaping @Sendable () -> SyncEngine?
    ) async {
        var retryDelay = schedule.initialRetryDelay
        for await _ in doorbell {
            var reasons = signal.take()
            guard !reasons.isEmpty else { continue }
            if reasons.contains(.localChange) && !reasons.contains(.poll) && !reasons.contains(.hint) {
                // A burst of commits goes in one send.
                do { try await schedule.clock.sleep(for: schedule.sendDelay) } catch { return }
                reasons.formUnion(signal.take())
            }
            guard !Task.isCancelled, let working = engine() else { return }
            let retry = await working.runScheduledWork(reasons)
            guard let retry else {
                retryDelay = schedule.initialRetryDelay
                continue
            }
            let jitter = Double.random(in: 0.8...1.2)
            let delay = max(retryDelay * jitter, retry.retryAfter ?? .zero)
            working.logger.notice("retrying in \(delay) after \(retry.error)")
            do { try await schedule.clock.sleep(for: delay) } catch { return }
            retryDelay = min(retryDelay * 2, schedule.maximumRetryDelay)
            for reason in retry.reasons { signal.ring(reason) }
        }
    }

    /// The schedule's only reference to its engine.
    final class WeakEngine: Sendable {
        private weak let engine: SyncEngine?
        init(_ engine: SyncEngine) { self.engine = engine }
        var value: SyncEngine? { engine }
    }

    /// A scheduled round's transient failure: what to do again, and when at the earliest.
    struct ScheduledRetry {
        var reasons: Set<ScheduleSignal.Reason>
        var error: CloudError
        var retryAfter: Duration?
    }

    /// A fetch for a hint or a poll; a transient failure is handed to the schedule's loop.
    func scheduledFetch(reason: ScheduleSignal.Reason) async {
        do {
            try await fetchChanges()
        } catch let error as CloudError where error.isTransient {
            signal.ring(reason)
        } catch {
            // Logged and visible on `status.lastError`; the next hint or poll tries again.
        }
    }

    /// Fetches after a hint or poll, sends after local changes when something waits.
    func runScheduledWork(_ reasons: Set<ScheduleSignal.Reason>) async -> ScheduledRetry? {
        var remaining = reasons
        do {
            if !remaining.isDisjoint(with: [.hint, .poll]) {
                try await fetchChanges()
                remaining.subtract([.hint, .poll])
            }
            if remaining.contains(.localChange) {
                if try await hasChangesToSend() { try await sendChanges() }
                remaining.remove(.localChange)
            }
            return nil
        } catch let error as CloudError where error.isTransient {
            return ScheduledRetry(reasons: remaining, error: error, retryAfter: error.retryAfter)
        } catch {
            // Logged and visible on `status.lastError`; the next commit, hint or poll tries again.
            return nil
        }
    }

    /// Whether a send has anything to do: records pending, or log entries not drained yet (the
    /// log always keeps its last drained entry, so its size says nothing).
    func hasChangesToSend() async throws -> Bool {
        try await database.writeWithoutTransaction { db in
            try RecordMetadata.pendingCount(in: db) > 0
                || ChangeLog.lastSequence(in: db) > ChangeLogDrain.drainedThrough(in: db)
        }
    }
}
