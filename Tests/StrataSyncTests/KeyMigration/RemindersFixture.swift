import Foundation
import StrataSQLite
import StrataSync
import Synchronization

/// An app's schema from before sync, with integer keys everywhere: lists, reminders (a list
/// foreign key that cascades, a nullable parent reminder), tags, a many-to-many join table
/// with a composite UNIQUE, and two tables that are not migrated but reference migrated ones
/// (attachments, with nullable references, and their notes, which reference attachments).
enum RemindersFixture {
    static let schema = """
        CREATE TABLE lists (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            title TEXT NOT NULL CHECK (title <> ''),
            color INTEGER NOT NULL DEFAULT 4278190335,
            position INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE reminders (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            listID INTEGER NOT NULL REFERENCES lists(id) ON DELETE CASCADE ON UPDATE CASCADE,
            parentID INTEGER, -- the reminder this one is a subtask of
            title TEXT NOT NULL COLLATE NOCASE,
            notes TEXT NOT NULL DEFAULT '',
            priority INTEGER CHECK (priority BETWEEN 1 AND 3),
            isCompleted INTEGER NOT NULL DEFAULT 0,
            dueDate TEXT,
            titleLength INTEGER GENERATED ALWAYS AS (length(title)) VIRTUAL,
            FOREIGN KEY (parentID) REFERENCES reminders(id) ON DELETE SET NULL
        );
        CREATE INDEX reminders_listID ON reminders (listID);
        CREATE INDEX reminders_dueDate ON reminders (dueDate) WHERE dueDate IS NOT NULL;
        CREATE TABLE tags (id INTEGER PRIMARY KEY, title TEXT NOT NULL COLLATE NOCASE);
        CREATE TABLE reminderTags (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            reminderID INTEGER NOT NULL REFERENCES reminders(id) ON DELETE CASCADE,
            tagID INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
            UNIQUE (reminderID, tagID)
        );
        CREATE TABLE attachments (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            reminderID INTEGER REFERENCES reminders ON DELETE SET NULL,
            name TEXT NOT NULL
        );
        CREATE TABLE attachmentNotes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            attachmentID INTEGER NOT NULL REFERENCES attachments(id) ON DELETE CASCADE,
            body TEXT
        );
        CREATE TABLE auditLog (id INTEGER PRIMARY KEY, message TEXT NOT NULL);
        CREATE TRIGGER reminders_audit AFTER INSERT ON reminders BEGIN
            INSERT INTO auditLog (message) VALUES ('inserted ' || NEW.title);
        END;
        CREATE VIEW reminderDetails AS
            SELECT r.id AS id, r.title AS title, l.title AS listTitle, count(rt.id) AS tagCount
            FROM reminders AS r JOIN lists AS l ON l.id = r.listID LEFT JOIN reminderTags AS rt ON rt.reminderID = r.id
            GROUP BY r.id;
        """

    static let migratedTables = ["lists", "reminders", "tags", "reminderTags"]

    /// 20 lists, 1,200 reminders less those deleted (ids with gaps), a subtask every fifth,
    /// 30 tags, about 1,800 tag links, 300 attachments (a quarter without a reminder) and 100
    /// attachment notes.
    static let data = """
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
        INSERT INTO lists (title, color, position) SELECT 'List ' || i, i * 1000, i FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1200)
        INSERT INTO reminders (listID, parentID, title, notes, priority, isCompleted, dueDate)
        SELECT (i * 7) % 20 + 1, CASE WHEN i % 5 = 0 THEN i - 3 END, 'Reminder ' || i, CASE WHEN i % 2 = 0 THEN 'note ' || i ELSE '' END,
            CASE WHEN i % 4 = 0 THEN NULL ELSE i % 3 + 1 END, i % 2, CASE WHEN i % 3 = 0 THEN date('2026-01-01', '+' || i || ' days') END
        FROM n;
        DELETE FROM reminders WHERE id % 97 = 0;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)
        INSERT INTO tags (title) SELECT 'Tag ' || i FROM n;
        INSERT OR IGNORE INTO reminderTags (reminderID, tagID) SELECT id, id % 30 + 1 FROM reminders;
        INSERT OR IGNORE INTO reminderTags (reminderID, tagID) SELECT id, (id * 7) % 30 + 1 FROM reminders WHERE id % 3 <> 0;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
        INSERT INTO attachments (reminderID, name) SELECT CASE WHEN i % 4 = 0 THEN NULL ELSE (SELECT id FROM reminders WHERE id >= i * 3 ORDER BY id LIMIT 1) END, 'file' || i FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
        INSERT INTO attachmentNotes (attachmentID, body) SELECT i * 3, 'body ' || i FROM n;
        DELETE FROM attachmentNotes WHERE id > 90;
        """

    /// Queries whose results must be the same before and after, once old ids are mapped to
    /// new ones; each names the table whose ids every column holds (nil: not an id).
    static let joins: [(sql: String, idTables: [String?])] = [
        (
            """
            SELECT r.id, r.listID, r.parentID, r.title, r.notes, r.priority, r.isCompleted, r.dueDate, r.titleLength, l.title, l.color
            FROM reminders AS r JOIN lists AS l ON l.id = r.listID ORDER BY r.rowid
            """,
            ["reminders", "lists", "reminders", nil, nil, nil, nil, nil, nil, nil, nil]
        ),
        (
            "SELECT c.id, p.id, p.title FROM reminders AS c LEFT JOIN reminders AS p ON p.id = c.parentID ORDER BY c.rowid",
            ["reminders", "reminders", nil]
        ),
        (
            """
            SELECT rt.id, r.id, t.id, r.title, t.title FROM reminderTags AS rt
            JOIN reminders AS r ON r.id = rt.reminderID JOIN tags AS t ON t.id = rt.tagID ORDER BY rt.rowid
            """,
            ["reminderTags", "reminders", "tags", nil, nil]
        ),
        (
            "SELECT a.id, a.reminderID, r.title, a.name FROM attachments AS a LEFT JOIN reminders AS r ON r.id = a.reminderID ORDER BY a.id",
            [nil, "reminders", nil, nil]
        ),
        (
            "SELECT n.id, a.id, n.body, a.name FROM attachmentNotes AS n JOIN attachments AS a ON a.id = n.attachmentID ORDER BY n.id",
            [nil, nil, nil, nil]
        ),
        ("SELECT id, title, listTitle, tagCount FROM reminderDetails ORDER BY title", ["reminders", nil, nil, nil]),
        ("SELECT id, title, color, position FROM lists ORDER BY rowid", ["lists", nil, nil, nil]),
        ("SELECT id, title FROM tags ORDER BY rowid", ["tags", nil]),
    ]

    /// Each query's rows, as values.
    static func snapshot(_ db: Database) throws -> [[[DatabaseValue]]] {
        try joins.map { join in
            try db.fetchAll(sql: join.sql) { row in try join.idTables.indices.map { try row[$0] as DatabaseValue } }
        }
    }

    /// The snapshot taken before the migration, with every old id replaced by its UUID.
    static func translate(_ snapshot: [[[DatabaseValue]]], with ids: [String: [Int64: String]]) -> [[[DatabaseValue]]] {
        zip(snapshot, joins).map { rows, join in
            rows.map { row in
                zip(row, join.idTables).map { value, table in
                    guard let table, case .integer(let old) = value else { return value }
                    return ids[table]?[old].map(DatabaseValue.text) ?? value
                }
            }
        }
    }

    /// Each migrated table's old id (its rowid, kept by the migration) to its new UUID text.
    static func idMap(_ db: Database, tables: [String] = migratedTables) throws -> [String: [Int64: String]] {
        var result: [String: [Int64: String]] = [:]
        for table in tables {
            let pairs = try db.fetchAll(sql: "SELECT rowid, id FROM \(table.quotedIdentifier)") { row in
                (try row[0] as Int64, try row[1] as String)
            }
            result[table] = Dictionary(uniqueKeysWithValues: pairs)
        }
        return result
    }

    /// A database with the schema and data.
    static func makeDatabase() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db throws in
            try db.execute(sql: schema)
            try db.execute(sql: data)
        }
        return queue
    }
}

/// UUIDs numbered from 1 (`00000000-0000-4000-8000-000000000001`…), counted, for migrations
/// that must give the same ids on every run.
final class SequentialUUIDs: Sendable {
    private let counter = Mutex(0)

    /// How many were issued.
    var issued: Int { counter.withLock { $0 } }

    /// The UUID numbered `number`.
    static func uuid(_ number: Int) -> UUID {
        let hex = String(number, radix: 16)
        return UUID(uuidString: "00000000-0000-4000-8000-" + String(repeating: "0", count: max(0, 12 - hex.count)) + hex) ?? UUID()
    }

    /// The next UUID.
    func next() -> UUID {
        Self.uuid(
            counter.withLock { value in
                value += 1
                return value
            })
    }
}
