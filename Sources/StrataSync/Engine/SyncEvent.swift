/// One thing the engine did to one record, for the log a person reads.
public struct SyncEvent: Sendable, Hashable {
    /// What happened to the record.
    public enum Action: String, Sendable, Hashable {
        case sent, deleted, fetched, saved, merged, retried, waiting, quarantined, failed
    }

    /// What happened.
    public var action: Action
    /// The record's table.
    public var recordType: String
    /// The record's name in the cloud.
    public var recordName: String

    /// An event.
    public init(action: Action, recordType: String, recordName: String) {
        self.action = action
        self.recordType = recordType
        self.recordName = recordName
    }

    /// The events as a small table (action, record type, record name), as SQLiteData's logs.
    public static func table(_ events: [SyncEvent], title: String) -> String {
        let headers = ["action", "recordType", "recordName"]
        let rows = events.map { [$0.action.rawValue, $0.recordType, $0.recordName] }
        let widths = (0..<3).map { column in ([headers[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0 }
        func line(_ cells: [String]) -> String {
            "│ " + cells.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: " │ ") + " │"
        }
        let rule = "├" + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: "┼") + "┤"
        return ([title, line(headers), rule] + rows.map(line)).joined(separator: "\n")
    }
}
