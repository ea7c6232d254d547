import Logging
import Synchronization

/// Collects what sync engines log, so the `devices` command can print it in order, each line
/// tagged with its device.
public final class SyncLogCollector: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    /// A logger for one device's engine.
    public func logger(device: String) -> Logger {
        Logger(label: "sync.\(device)") { _ in Handler(collector: self, device: device) }
    }

    /// The lines logged since the last call.
    public func drain() -> [String] {
        lines.withLock { lines in
            defer { lines.removeAll() }
            return lines
        }
    }

    struct Handler: LogHandler {
        let collector: SyncLogCollector
        let device: String
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let text = "\(event.message)"
            let tagged = text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { "  [\(device)] \($0)" }.joined(separator: "\n")
            collector.lines.withLock { $0.append(tagged) }
        }
    }
}
