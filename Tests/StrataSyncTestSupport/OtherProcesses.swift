import Foundation
import StrataSQLite
import StrataSync
import StrataTestSupport

/// Another connection to the file at `path`, opened as a tool or an app extension opens the
/// app's file (with the capture functions, as Sync.md says), or, without them, as a program
/// that does not use Strata would.
package func otherConnection(to path: String, captureFunctions: Bool = true) throws -> DatabaseQueue {
    var configuration = Configuration()
    if captureFunctions {
        configuration.prepareDatabase { db in
            if db.role.canWrite { try db.addSyncCaptureFunctions() }
        }
    }
    return try DatabaseQueue(path: path, configuration: configuration)
}

/// Runs a program to its end on a thread of its own (waiting blocks), with its standard
/// output and error together.
package func runToEnd(_ executable: URL, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    try await runOnBackgroundThread {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

extension SyncTestDevice {
    /// Sends this device's changes, then fetches them on `other`.
    package func sync(to other: SyncTestDevice) async throws {
        try await engine.sendChanges()
        try await other.engine.fetchChanges()
    }
}
