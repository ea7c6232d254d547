import Foundation
import Strata

/// A record of the tests' one table.
struct Item: TableRecord, Sendable, Hashable {
    static let tableName = "items"
    static let columnNames = ["id", "name"]
    var id: Int64
    var name: String

    init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }

    init(row: Row) throws {
        id = try row.decode(at: 0)
        name = try row.decode(at: 1)
    }

    func encodeColumns(to columns: inout ColumnEncoder) {
        columns.append(id)
        columns.append(name)
    }
}

/// A second table, so seeds have runs of more than one table.
struct Tag: TableRecord, Sendable, Hashable {
    static let tableName = "tags"
    static let columnNames = ["id", "itemID", "label"]
    var id: UUID
    var itemID: Int64
    var label: String?

    init(id: UUID, itemID: Int64, label: String?) {
        self.id = id
        self.itemID = itemID
        self.label = label
    }

    init(row: Row) throws {
        id = try row.decode(at: 0)
        itemID = try row.decode(at: 1)
        label = try row.decode(at: 2)
    }

    func encodeColumns(to columns: inout ColumnEncoder) {
        columns.append(id)
        columns.append(itemID)
        columns.append(label)
    }
}

enum TestSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
                    CREATE TABLE tags (
                        id TEXT PRIMARY KEY NOT NULL,
                        itemID INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
                        label TEXT NOT NULL);
                    """)
        }
        return migrator
    }
}

extension DependencyValues {
    /// The tests' version of an app's bootstrap: the context's database, migrated.
    mutating func bootstrapDatabase() throws {
        let database = try Strata.defaultDatabase()
        try TestSchema.migrator.migrate(database)
        defaultDatabase = database
    }
}
