import Foundation

/// Where ``defaultDatabase(path:configuration:)`` keeps the live database file.
public struct DefaultDatabaseLocation: Sendable, Hashable {
    /// The database file's absolute path.
    public var path: String

    /// A location at an explicit path; relative paths are resolved against the current
    /// directory, `~` against the home directory.
    public init(path: String) throws(DefaultDatabaseError) {
        let expanded = NSString(string: path).expandingTildeInPath
        guard !expanded.isEmpty else { throw .emptyPath }
        let url = URL(fileURLWithPath: expanded)
        self.path = url.standardizedFileURL.path
    }

    /// The user's data directory: `$XDG_DATA_HOME`, else `~/.local/share`, on Linux (the XDG
    /// base directory specification); Application Support on Apple platforms.
    public static func dataDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        #if canImport(Darwin)
            if let url = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first {
                return url
            }
        #endif
        // The specification says a relative XDG_DATA_HOME is invalid and must be ignored.
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") {
            return URL(fileURLWithPath: dataHome, isDirectory: true)
        }
        let home =
            environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".local/share", isDirectory: true)
    }

    /// `<data directory>/<application name>/db.sqlite`; the application name defaults to the
    /// running program's name.
    public static func standard(
        applicationName: String = ProcessInfo.processInfo.processName,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(DefaultDatabaseError) -> DefaultDatabaseLocation {
        let url = dataDirectory(environment: environment)
            .appendingPathComponent(applicationName, isDirectory: true)
            .appendingPathComponent("db.sqlite")
        return try DefaultDatabaseLocation(path: url.path)
    }

    /// Creates the folders above the file that do not exist yet.
    public func createParentDirectory() throws(DefaultDatabaseError) {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw .cannotCreateDirectory(path: folder.path, reason: error.localizedDescription)
        }
    }
}

/// Why ``defaultDatabase(path:configuration:)`` could not choose or prepare a live location.
public enum DefaultDatabaseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path given was empty.
    case emptyPath
    /// A folder above the database file could not be created.
    case cannotCreateDirectory(path: String, reason: String)

    public var description: String {
        switch self {
        case .emptyPath:
            "The database path is empty."
        case .cannotCreateDirectory(let path, let reason):
            "Could not create the folder \(path) for the database: \(reason)"
        }
    }
}
