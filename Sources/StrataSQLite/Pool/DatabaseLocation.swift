import Foundation

/// Where a ``DatabaseQueue`` or ``DatabasePool`` keeps its data.
///
/// Modules that keep data beside a database (a sync metadatabase, say) derive their own
/// location from it with ``sibling(named:)``: a file next to the file, an in-memory database
/// next to the in-memory one.
public enum DatabaseLocation: Sendable, Hashable, CustomStringConvertible {
    /// A database file at this path.
    case file(path: String)
    /// A database in memory, shared by every connection of the process that opens the same
    /// name (SQLite's memdb VFS), alive while one of them is open.
    case namedMemory(name: String)
    /// A private in-memory database, visible to one connection only.
    case privateMemory

    /// The filename SQLite opens for this location: the path, a `file:` URI of the memdb VFS,
    /// or `:memory:`. Pass it to `ATTACH` (connections open URIs).
    public var sqliteFilename: String {
        switch self {
        case .file(let path):
            return path
        case .namedMemory(let name):
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_."))
            let encoded = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
            // memdb shares a database among connections only when its name starts with "/".
            return "file:/strata-\(encoded)?vfs=memdb"
        case .privateMemory:
            return ":memory:"
        }
    }

    /// The file path, for a file database.
    public var path: String? {
        if case .file(let path) = self { return path }
        return nil
    }

    /// A location beside this one: for a file, a file named `name` in the same directory; for
    /// a named in-memory database, the in-memory database `"<its name>/<name>"`; for a private
    /// one, another private one.
    public func sibling(named name: String) -> DatabaseLocation {
        switch self {
        case .file(let path):
            let directory = (path as NSString).deletingLastPathComponent
            return .file(path: directory.isEmpty ? name : (directory as NSString).appendingPathComponent(name))
        case .namedMemory(let base):
            return .namedMemory(name: base + "/" + name)
        case .privateMemory:
            return .privateMemory
        }
    }

    /// The file path, or a description of the in-memory database, for messages.
    public var description: String {
        switch self {
        case .file(let path): path
        case .namedMemory(let name): "in-memory database \"\(name)\""
        case .privateMemory: "private in-memory database"
        }
    }

    var isFile: Bool { path != nil }
}
