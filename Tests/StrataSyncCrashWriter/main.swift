// A child process for StrataSyncTests' crash test: it commits rows to a synced table one
// transaction at a time, drains the change log into the metadatabase every few commits, and
// prints the id of every committed row, until the test kills it with SIGKILL.
import Foundation
import StrataSQLite
import StrataSync

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: strata-sync-crash-writer DATABASE-PATH\n".utf8))
    exit(2)
}
do {
    let pool = try DatabasePool(path: arguments[1])
    try pool.write { db in
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS items (id TEXT PRIMARY KEY NOT NULL, value INTEGER)")
    }
    let engine = try SyncEngine(
        for: pool, tableNames: ["items"], container: MockCloud().container(user: "crash"),
        configuration: SyncEngineConfiguration(deviceID: "writer", schedule: nil), startImmediately: false)
    var index = 0
    while true {
        index += 1
        let id = "item-\(index)"
        try pool.write { db in
            try db.execute(sql: "INSERT INTO items (id, value) VALUES (?, ?)", arguments: [id, index])
        }
        // Written straight to the file descriptor: nothing buffered is lost to the kill.
        FileHandle.standardOutput.write(Data((id + "\n").utf8))
        if index % 7 == 0 { try await engine.drainChangeLog() }
    }
} catch {
    FileHandle.standardError.write(Data("strata-sync-crash-writer: \(error)\n".utf8))
    exit(1)
}
