// A child process for StrataSyncTests.
//
// `strata-sync-crash-writer PATH`: the crash test's writer. It commits rows to a synced table
// one transaction at a time, drains the change log into the metadatabase every few commits,
// and prints the id of every committed row, until the test kills it with SIGKILL.
//
// `strata-sync-crash-writer --tool PATH COUNT`: another process writing a file whose engine
// runs elsewhere, as a command-line tool would: no engine, the capture functions only. It
// inserts COUNT rows in transactions of three, edits every second row's `value`, deletes every
// fifth, and exits.
//
// `strata-sync-crash-writer --tool-until-killed PATH`: the same tool committing one row per
// transaction and printing each committed id, until the test kills it.
//
// `strata-sync-crash-writer --plain PATH`: a connection without the capture functions tries
// one insert; prints the error and exits 3 when it is refused.
//
// `strata-sync-crash-writer --tool-big PATH COUNT`: a tool inserting COUNT rows into `items` in
// ONE transaction, then adding 1 to every row's `value` in a second one.
//
// `strata-sync-crash-writer --tool-burst PATH PREFIX COUNT`: a tool inserting COUNT rows
// (`PREFIX-1` ...) two per transaction, as fast as it can, beside other writers; exits 1 with
// the error when a write fails (SQLITE_BUSY, say).
import Foundation
import StrataSQLite
import StrataSync

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "--tool", let count = Int(arguments[3]) {
    do {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            if db.role.canWrite { try db.addSyncCaptureFunctions() }
        }
        let queue = try DatabaseQueue(path: arguments[2], configuration: configuration)
        for start in stride(from: 1, through: count, by: 3) {
            try queue.write { db in
                for index in start..<min(start + 3, count + 1) {
                    try db.execute(sql: "INSERT INTO items (id, value) VALUES (?, ?)", arguments: ["tool-\(index)", index])
                }
            }
        }
        try queue.write { db in
            try db.execute(sql: "UPDATE items SET value = value * 10 WHERE id GLOB 'tool-*' AND CAST(substr(id, 6) AS INTEGER) % 2 = 0")
            try db.execute(sql: "DELETE FROM items WHERE id GLOB 'tool-*' AND CAST(substr(id, 6) AS INTEGER) % 5 = 0")
        }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-sync-crash-writer --tool: \(error)\n".utf8))
        exit(1)
    }
}
if arguments.count == 3, arguments[1] == "--tool-until-killed" {
    do {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            if db.role.canWrite { try db.addSyncCaptureFunctions() }
        }
        let queue = try DatabaseQueue(path: arguments[2], configuration: configuration)
        var index = 0
        while true {
            index += 1
            let id = "tool-\(index)"
            try queue.write { db in try db.execute(sql: "INSERT INTO items (id, value) VALUES (?, ?)", arguments: [id, index]) }
            FileHandle.standardOutput.write(Data((id + "\n").utf8))
        }
    } catch {
        FileHandle.standardError.write(Data("strata-sync-crash-writer --tool-until-killed: \(error)\n".utf8))
        exit(1)
    }
}
func toolQueue(_ path: String) throws -> DatabaseQueue {
    var configuration = Configuration()
    configuration.prepareDatabase { db in
        if db.role.canWrite { try db.addSyncCaptureFunctions() }
    }
    return try DatabaseQueue(path: path, configuration: configuration)
}
if arguments.count == 4, arguments[1] == "--tool-big", let count = Int(arguments[3]) {
    do {
        let queue = try toolQueue(arguments[2])
        try queue.write { db in
            for index in 1...count {
                try db.execute(sql: "INSERT INTO items (id, value) VALUES (?, ?)", arguments: ["big-\(index)", index])
            }
        }
        try queue.write { db in try db.execute(sql: "UPDATE items SET value = value + 1 WHERE id GLOB 'big-*'") }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-sync-crash-writer --tool-big: \(error)\n".utf8))
        exit(1)
    }
}
if arguments.count == 5, arguments[1] == "--tool-burst", let count = Int(arguments[4]) {
    let prefix = arguments[3]
    do {
        let queue = try toolQueue(arguments[2])
        for start in stride(from: 1, through: count, by: 2) {
            try queue.write { db in
                for index in start..<min(start + 2, count + 1) {
                    try db.execute(sql: "INSERT INTO items (id, value) VALUES (?, ?)", arguments: ["\(prefix)-\(index)", index])
                }
            }
        }
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-sync-crash-writer --tool-burst \(prefix): \(error)\n".utf8))
        exit(1)
    }
}
if arguments.count == 3, arguments[1] == "--plain" {
    do {
        let queue = try DatabaseQueue(path: arguments[2])
        try queue.write { db in
            try db.execute(sql: "INSERT INTO items (id, value) VALUES ('plain', 1)")
        }
        exit(0)
    } catch {
        FileHandle.standardOutput.write(Data("\(error)\n".utf8))
        exit(3)
    }
}
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
