import Foundation

/// One column value, for every writer of the rows alike: Strata, the SQLite C API and
/// PostgreSQL's COPY.
enum BenchValue {
    case text(String)
    case integer(Int64)
    case real(Double)
    case blob([UInt8])
    case null
}

/// The rows every phase syncs: a parent table and a child table whose rows reference a parent
/// (`ON DELETE CASCADE`), ten columns each, mixed TEXT, INTEGER, REAL, small BLOBs and NULLs.
/// Row `i` of a run is a project when `i` is a multiple of 5, else a task of the project just
/// before it, so N rows are N/5 projects and 4N/5 tasks, parents always first. Values are
/// computed from `i`, never stored: a million rows cost no memory before they are written.
enum BenchRows {
    static let tableNames = ["projects", "tasks"]
    static let projectColumns = ["id", "name", "code", "budget", "created_at", "archived", "color", "note", "rating", "tag"]
    static let taskColumns = ["id", "project_id", "title", "position", "amount", "done", "payload", "comment", "due_at", "weight"]

    /// The two tables, their names prefixed (`plain_` for the unsynced copies).
    static func schema(prefix: String = "") -> String {
        """
        CREATE TABLE IF NOT EXISTS \(prefix)projects (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, code INTEGER NOT NULL,
            budget REAL NOT NULL, created_at INTEGER NOT NULL, archived INTEGER NOT NULL, color BLOB NOT NULL, note TEXT,
            rating REAL, tag TEXT);
        CREATE TABLE IF NOT EXISTS \(prefix)tasks (id TEXT PRIMARY KEY NOT NULL,
            project_id TEXT NOT NULL REFERENCES \(prefix)projects(id) ON DELETE CASCADE, title TEXT NOT NULL,
            position INTEGER NOT NULL, amount REAL NOT NULL, done INTEGER NOT NULL, payload BLOB NOT NULL, comment TEXT,
            due_at INTEGER, weight REAL);
        """
    }

    static func isProject(_ index: Int) -> Bool { index % 5 == 0 }

    /// How many of `rows` rows are projects.
    static func projectCount(_ rows: Int) -> Int { (rows + 4) / 5 }

    /// Row `index`'s table (without prefix) and values, in column order. `key` makes the ids
    /// of one run, device or round distinct from every other's.
    static func row(_ index: Int, key: String) -> (table: String, values: [BenchValue]) {
        // A cheap deterministic scramble, so values vary without a random generator's state.
        let mix = UInt64(truncatingIfNeeded: index &* 2_654_435_761) ^ 0x9E37_79B9
        if isProject(index) {
            return (
                "projects",
                [
                    .text("\(key)-\(index)"), .text("Project \(index) of \(key)"), .integer(Int64(index)),
                    .real(Double(mix % 1_000_000) / 100), .integer(1_700_000_000_000 + Int64(index)),
                    .integer(Int64(index % 7 == 0 ? 1 : 0)),
                    .blob(bytes(mix, count: 16)), index % 3 == 0 ? .null : .text("a note about project \(index)"),
                    index % 4 == 0 ? .null : .real(Double(mix % 50) / 10), index % 2 == 0 ? .null : .text("tag-\(mix % 97)"),
                ]
            )
        }
        let project = index - index % 5
        return (
            "tasks",
            [
                .text("\(key)-\(index)"), .text("\(key)-\(project)"), .text("Task \(index) of project \(project)"),
                .integer(Int64(index % 5)), .real(Double(mix % 100_000) / 100), .integer(Int64(mix % 2)),
                .blob(bytes(mix, count: 16 + Int(mix % 49))), index % 3 == 1 ? .null : .text("comment \(mix % 10_000)"),
                index % 2 == 0 ? .null : .integer(1_800_000_000_000 + Int64(index)),
                index % 5 == 4 ? .null : .real(Double(mix % 1_000) / 7),
            ]
        )
    }

    /// `count` bytes derived from `seed`: 16 to 64 bytes is what the columns hold.
    static func bytes(_ seed: UInt64, count: Int) -> [UInt8] {
        var state = seed | 1
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
    }
}
