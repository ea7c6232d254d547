/// Why the engine refused to share, unshare or accept: each case names the table or record.
public enum SharingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The engine is stopped: call `start()` first.
    case engineNotRunning
    /// The record's table is not synced by this engine.
    case tableNotSynced(String)
    /// Only root records (rows of a table with no foreign key) can be shared; their
    /// descendants are shared with them.
    case notARoot(table: String, parentTable: String)
    /// Rows of `privateTables` are never shared.
    case privateTable(String)
    /// The record has not reached the cloud yet.
    case recordNotSynced(table: String, primaryKey: String)
    /// The record belongs to another user, who alone can share it.
    case notTheOwner(table: String, primaryKey: String, owner: String)
    /// The record is not shared.
    case recordNotShared(table: String, primaryKey: String)
    /// The text is not a share URL.
    case invalidShareURL(String)

    /// What was refused and why.
    public var description: String {
        switch self {
        case .engineNotRunning:
            "the sync engine is not running: call start() before sharing"
        case .tableNotSynced(let table):
            "table \(table) is not synced by this engine, so its rows cannot be shared"
        case .notARoot(let table, let parent):
            "rows of \(table) cannot be shared on their own: \(table) has a foreign key to \(parent); share the \(parent) row, and its \(table) rows are shared with it"
        case .privateTable(let table):
            "table \(table) is one of the engine's privateTables, which are never shared"
        case .recordNotSynced(let table, let key):
            "record \(key) of \(table) has not been sent to the cloud yet: call sendChanges() first"
        case .notTheOwner(let table, let key, let owner):
            "record \(key) of \(table) belongs to \(owner), who alone can share it"
        case .recordNotShared(let table, let key):
            "record \(key) of \(table) is not shared"
        case .invalidShareURL(let url):
            "\"\(url)\" is not a share URL"
        }
    }
}
