/// A table, optionally qualified by its schema (`main`, `temp`, or an attached name).
///
/// Names are lowercased, as SQLite compares identifiers case-insensitively. A nil schema
/// matches the table of that name in any schema: SQLite does not always report the schema of
/// a read (`SELECT count(*) FROM t` reports none), and guessing "main" could miss an attached
/// table.
public struct QualifiedTable: Hashable, Sendable, CustomStringConvertible {
    /// The schema, lowercased; nil matches the table in any schema.
    public var schema: String?
    /// The table name, lowercased.
    public var name: String

    /// A table of `schema` (nil for any), names compared case-insensitively.
    public init(schema: String?, name: String) {
        self.schema = schema?.lowercased()
        self.name = name.lowercased()
    }

    /// `schema.table`, or the table alone when any schema matches.
    public var description: String {
        schema.map { "\($0).\(name)" } ?? name
    }
}

/// The part of a database a query reads: its tables and columns.
///
/// Strata records a statement's region while it is prepared (SQLite's authorizer reports each
/// table and column the statement reads, including those behind views), and
/// ``Database/recordingReadRegion(_:)`` unions the regions of every statement a closure runs.
/// A change to a table of the region means the query's result may have changed.
public struct DatabaseRegion: Hashable, Sendable, CustomStringConvertible {
    /// Tables read, with the columns read in each ("" stands for "the table as a whole", as in
    /// `count(*)`).
    public private(set) var columnsByTable: [QualifiedTable: Set<String>]
    /// Whether the region is the whole database: any change affects it.
    public private(set) var isFullDatabase: Bool

    /// An empty region: no change affects it.
    public init() {
        columnsByTable = [:]
        isFullDatabase = false
    }

    /// Every table of every schema.
    public static let fullDatabase: DatabaseRegion = {
        var region = DatabaseRegion()
        region.isFullDatabase = true
        return region
    }()

    /// A region made of whole tables of any schema.
    public init(tables: some Sequence<String>) {
        self.init()
        for table in tables { insert(QualifiedTable(schema: nil, name: table), column: "") }
    }

    /// The tables read.
    public var tables: Set<QualifiedTable> { Set(columnsByTable.keys) }

    /// Whether the region reads nothing (and is not the whole database).
    public var isEmpty: Bool { !isFullDatabase && columnsByTable.isEmpty }

    /// Adds a column of a table (`""` for the table as a whole).
    public mutating func insert(_ table: QualifiedTable, column: String) {
        columnsByTable[table, default: []].insert(column.lowercased())
    }

    /// Adds every table and column of `other`; a full-database region absorbs everything.
    public mutating func formUnion(_ other: DatabaseRegion) {
        if other.isFullDatabase { isFullDatabase = true }
        for (table, columns) in other.columnsByTable {
            columnsByTable[table, default: []].formUnion(columns)
        }
    }

    /// The region reading everything either region reads.
    public func union(_ other: DatabaseRegion) -> DatabaseRegion {
        var result = self
        result.formUnion(other)
        return result
    }

    /// Whether every change that affects `self` also affects `other`.
    public func isCovered(by other: DatabaseRegion) -> Bool {
        if other.isFullDatabase { return true }
        if isFullDatabase { return false }
        return tables.allSatisfy { other.contains($0) }
    }

    /// Whether a change to `table` affects the region.
    public func contains(_ table: QualifiedTable) -> Bool {
        if isFullDatabase { return true }
        if columnsByTable[table] != nil { return true }
        if table.schema != nil, columnsByTable[QualifiedTable(schema: nil, name: table.name)] != nil { return true }
        if table.schema == nil {
            return columnsByTable.keys.contains { $0.name == table.name }
        }
        return false
    }

    /// Whether changes to any of these tables affect the region.
    public func isModified(byChangesTo changedTables: Set<QualifiedTable>) -> Bool {
        isFullDatabase || changedTables.contains { contains($0) }
    }

    /// The tables and columns, for logs and test failures.
    public var description: String {
        if isFullDatabase { return "full database" }
        return columnsByTable.keys.map { table in
            let columns = (columnsByTable[table] ?? []).filter { !$0.isEmpty }.sorted()
            return columns.isEmpty ? "\(table)" : "\(table)(\(columns.joined(separator: ", ")))"
        }.sorted().joined(separator: ", ")
    }
}
