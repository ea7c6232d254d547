import Foundation

/// Where a queue or pool keeps its data.
enum DatabaseLocation: Sendable {
    case file(String)
    /// A database in memory, shared by every connection of the process that opens the same
    /// name (SQLite's memdb VFS; the name must start with `/` to be shared).
    case sharedMemory(String)
    /// A private in-memory database, visible to one connection only.
    case privateMemory

    var openPath: String {
        switch self {
        case .file(let path):
            return path
        case .sharedMemory(let name):
            let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_."))
            let encoded = name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
            return "file:/strata-\(encoded)?vfs=memdb"
        case .privateMemory:
            return ":memory:"
        }
    }

    var description: String {
        switch self {
        case .file(let path): path
        case .sharedMemory(let name): "in-memory database \"\(name)\""
        case .privateMemory: "private in-memory database"
        }
    }

    var isFile: Bool {
        if case .file = self { return true }
        return false
    }
}
