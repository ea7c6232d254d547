import Strata
import Synchronization

/// Draws a ``SyncProgressBar`` on a terminal while a sync runs: each new state redraws the line
/// (a carriage return, then the bar), a new direction (fetching, then sending) starts a new
/// line, and the last line ends with a newline.
public final class SyncProgressPrinter: Sendable {
    private let bar: SyncProgressBar
    private let write: @Sendable (String) -> Void
    private let drawn = Mutex<(line: String?, isOpen: Bool)>((nil, false))

    /// A printer drawing `bar` through `write` (standard error, for the command line).
    public init(bar: SyncProgressBar = SyncProgressBar(), write: @escaping @Sendable (String) -> Void) {
        self.bar = bar
        self.write = write
    }

    /// Runs `operation` (a sync of `engine`), drawing every status the engine goes through
    /// meanwhile; returns once the last one is drawn.
    public func drawing<T: Sendable>(_ engine: SyncEngine, during operation: () async -> T) async -> T {
        let updates = engine.statusUpdates()
        let reader = StatusReader()
        return await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await status in updates {
                    self.show(status.progress)
                    if reader.read(status.revision) { break }
                }
            }
            let result = await operation()
            // Every status up to this one is in the stream: wait for the drawing to reach it,
            // or stop a reader that already has (it waits for a status that may never come).
            if reader.caughtUp(with: engine.status.revision) { group.cancelAll() }
            await group.waitForAll()
            end()
            return result
        }
    }

    /// Draws the bar for `progress`, if it differs from the line on screen.
    public func show(_ progress: SyncProgress) {
        let line = bar.line(for: progress)
        let text: String? = drawn.withLock { drawn in
            guard let line, line != drawn.line else { return nil }
            let sameKind = drawn.line.map { Self.kind(of: $0) == Self.kind(of: line) } ?? false
            let previous = drawn.line ?? ""
            drawn = (line, true)
            guard sameKind else { return (previous.isEmpty ? "" : "\n") + line }
            // Spaces clear what a longer line before left.
            return "\r" + line + String(repeating: " ", count: max(0, previous.count - line.count))
        }
        if let text { write(text) }
    }

    /// Ends the line the bar is on, if one was drawn.
    public func end() {
        let wasOpen = drawn.withLock { drawn in
            defer { drawn = (nil, false) }
            return drawn.isOpen
        }
        if wasOpen { write("\n") }
    }

    private static func kind(of line: String) -> Substring {
        line.split(separator: " ").last ?? ""
    }
}

/// How far a reader of ``SyncEngine/statusUpdates()`` has come, and where it may stop.
private final class StatusReader: Sendable {
    private let state = Mutex<(read: Int, target: Int?)>((-1, nil))

    /// The reader took the status of `revision`; returns whether it may stop.
    func read(_ revision: Int) -> Bool {
        state.withLock { state in
            state.read = revision
            return state.target.map { revision >= $0 } ?? false
        }
    }

    /// The reader may stop at `revision`; returns whether it already passed it.
    func caughtUp(with revision: Int) -> Bool {
        state.withLock { state in
            state.target = revision
            return state.read >= revision
        }
    }
}
