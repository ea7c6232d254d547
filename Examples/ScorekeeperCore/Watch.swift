import Foundation
import Strata

/// `scorekeeper watch`: prints the scoreboard, then again whenever the data changes.
///
/// The printer subscribes with `@Fetch(ScoreboardRequest())` on the default database and
/// reprints each new value. What changes the data depends on the mode:
/// - preview: a second task plays ``WatchStep/previewScript`` (pausing on
///   `@Dependency(\.continuousClock)` between steps), showing two parts of a program sharing one
///   database;
/// - live: other `scorekeeper` processes. SQLite tells a connection nothing about commits made
///   by other processes, so a third task polls `PRAGMA data_version`
///   (`pollExternalChanges(every:clock:)`) and wakes the observation when it changes.
public struct Watch: Sendable {
    @Dependency(\.defaultDatabase) var database
    @Dependency(\.continuousClock) var clock

    /// How often the live mode checks for other processes' commits.
    public var pollInterval: Duration
    /// The pause between two scripted steps.
    public var stepPause: Duration

    public init(pollInterval: Duration = .milliseconds(500), stepPause: Duration = .seconds(1)) {
        self.pollInterval = pollInterval
        self.stepPause = stepPause
    }

    /// Live mode: prints until the task is cancelled (the process interrupted).
    public func run(output: @escaping @Sendable (String) -> Void) async throws {
        let frames = FrameLog()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await printFrames(to: output, log: frames) }
            group.addTask { try await database.pollExternalChanges(every: pollInterval, clock: clock) }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Preview mode: prints while `steps` change the data, one frame per step, then returns.
    public func run(script steps: [WatchStep], output: @escaping @Sendable (String) -> Void) async throws {
        let frames = FrameLog()
        let keeper = Scorekeeper()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await printFrames(to: output, log: frames) }
            // The other side: makes changes as another screen of the app would.
            try await frames.waitUntilShown(currentScoreboard())
            for step in steps {
                try await clock.sleep(for: stepPause)
                output("▸ \(step.description)\n")
                try step.perform(keeper)
                await frames.waitUntilShown(try currentScoreboard())
            }
            group.cancelAll()
        }
    }

    private func currentScoreboard() async throws -> Scoreboard {
        try await database.read { db in try ScoreboardRequest().fetch(db) }
    }

    /// The subscriber: one frame per distinct scoreboard.
    private func printFrames(to output: @Sendable (String) -> Void, log: FrameLog) async throws {
        @Fetch(ScoreboardRequest()) var scoreboard = Scoreboard()
        var previous: Scoreboard?
        var update = 0
        for await value in $scoreboard.values {
            if let error = $scoreboard.loadError { throw error }
            guard value != previous else { continue }
            previous = value
            let heading = update == 0 ? "Scoreboard" : "Scoreboard, update \(update)"
            output(
                "── \(heading) " + String(repeating: "─", count: max(4, 60 - heading.count)) + "\n\n" + Rendering.scoreboard(value) + "\n\n"
            )
            update += 1
            await log.record(value)
        }
        try Task.checkCancellation()
    }
}
