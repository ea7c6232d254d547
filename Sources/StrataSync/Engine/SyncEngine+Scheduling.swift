import StrataSQLite

extension SyncEngine {
    /// Starts automatic work when the configuration has a ``SyncSchedule``: a send shortly
    /// after each commit to a synced table, a fetch on every change hint and poll interval,
    /// retries with exponential backoff. Changes committed while stopped were logged and go
    /// out with the first send.
    public func start() {
        guard !statusStorage.withLock({ $0.isRunning }) else { return }
        updateStatus { $0.isRunning = true }
        guard let schedule = configuration.schedule else { return }
        let hints = container.changeHints()
        let loop = Task { [weak self] in
            guard let self else { return }
            await self.runSchedule(schedule)
        }
        let hintLoop = Task { [weak self] in
            for await _ in hints {
                guard let self else { return }
                try? await self.fetchChanges()
            }
        }
        tasks.withLock { $0 += [loop, hintLoop] }
    }

    /// Stops automatic work. Local changes keep being logged, and go out after ``start()``.
    public func stop() {
        let running = tasks.withLock { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in running { task.cancel() }
        updateStatus { $0.isRunning = false }
    }

    private func runSchedule(_ schedule: SyncSchedule) async {
        var retryDelay = schedule.initialRetryDelay
        var sinceFetch = Duration.zero
        while !Task.isCancelled {
            do {
                try await schedule.clock.sleep(for: schedule.sendDelay)
            } catch {
                return
            }
            sinceFetch += schedule.sendDelay
            do {
                if sinceFetch >= schedule.pollInterval {
                    sinceFetch = .zero
                    try await fetchChanges()
                }
                // The log is in the main file, so a reader answers without taking the writer.
                let logged = try await database.read { db in try ChangeLog.count(in: db) }
                if logged > 0 || status.pendingCount > 0 { try await sendChanges() }
                retryDelay = schedule.initialRetryDelay
            } catch let error as CloudError where error.isTransient {
                let jitter = Double.random(in: 0.8...1.2)
                let delay = max(retryDelay * jitter, error.retryAfter ?? .zero)
                logger.notice("retrying in \(delay) after \(error)")
                try? await schedule.clock.sleep(for: delay)
                retryDelay = min(retryDelay * 2, schedule.maximumRetryDelay)
            } catch {
                // Logged and visible on `status.lastError`; the next round tries again.
            }
        }
    }
}
