import StrataSQLite

/// An `INSERT` statement: rows of records, drafts or chosen columns, or the rows of a select.
///
/// ```swift
/// try Player.insert { Player(id: 1, gameID: 1, name: "Ann", score: 12) }.execute(db)
/// try Player.insert { Player.Draft(gameID: 1, name: "Eve") }.execute(db)   // SQLite assigns the id
/// try Player.insert { ($0.gameID, $0.name) } values: { (1, "Ann"); (1, "Bob") }.execute(db)
/// try Player.insert(or: .ignore) { player }.execute(db)
/// let ids = try Player.insert { drafts }.returning(\.id).fetchAll(db)
/// ```
///
/// Records and drafts write every column of `TableRecord.columnNames`, which lists the
/// written columns only: generated columns are never in an insert. Several rows make one
/// multi-row `VALUES`; the SQL text depends on the number of rows, not their values, so the
/// same shape reuses its prepared statement.
///
/// An insert of zero rows is empty: its ``QueryStatement/sql`` is `""`, `execute` does nothing,
/// and `fetchAll` returns no rows. A record whose encoding throws (or that encodes the wrong
/// number of values) makes `execute` / `fetchAll` / `fetchOne` throw that error, before any SQL
/// runs.
///
/// - `Into`: the table written.
/// - `Returning`: what a row of `RETURNING` decodes to; `()` without `returning(_:)`.
public struct Insert<Into: Table, Returning>: QueryStatement {
    public typealias QueryValue = Returning

    var resolution: ConflictResolution?
    var columnNames: [String]
    var source: InsertSource
    var conflictClauses: [QueryFragment] = []
    var returning: [QueryFragment] = []
    var failure: (any Error)?

    init(resolution: ConflictResolution?, columnNames: [String], source: InsertSource, failure: (any Error)? = nil) {
        self.resolution = resolution
        self.columnNames = columnNames
        self.source = source
        self.failure = failure
    }

    init<Other>(copying other: Insert<Into, Other>, returning: [QueryFragment]) {
        resolution = other.resolution
        columnNames = other.columnNames
        source = other.source
        conflictClauses = other.conflictClauses
        failure = other.failure
        self.returning = returning
    }

    /// Whether the insert has no rows to write (and its SQL is empty).
    public var isEmpty: Bool {
        if case .values(let rows) = source { return rows.isEmpty }
        return false
    }

    public var statementFragment: QueryFragment {
        fragment(naming: Into.tableFragment)
    }

    public func checkedStatementFragment() throws -> QueryFragment {
        if let failure { throw failure }
        return statementFragment
    }

    /// The statement, with `table` for its table's name.
    private func fragment(naming table: QueryFragment) -> QueryFragment {
        var fragment = QueryFragment(verbatim: "INSERT" + conflictResolutionClause(resolution) + " INTO ")
        fragment.append(table)
        fragment.append(verbatim: " (" + columnNames.map(\.quotedIdentifier).joined(separator: ", ") + ")")
        switch source {
        case .values(let rows):
            guard !rows.isEmpty else { return QueryFragment() }
            fragment.append(verbatim: " VALUES ")
            fragment.append(rows.map { "(" + $0.joined(separator: ", ") + ")" }.joined(separator: ", "))
        case .select(let select):
            if conflictClauses.isEmpty {
                fragment.append(verbatim: " ")
                fragment.append(select)
            } else {
                // `INSERT … SELECT … ON CONFLICT` is ambiguous to SQLite's parser unless the
                // select has a WHERE; wrapping it gives it one whatever it is.
                fragment.append(verbatim: " SELECT * FROM (")
                fragment.append(select)
                fragment.append(verbatim: ") WHERE 1")
            }
        }
        for clause in conflictClauses {
            fragment.append(verbatim: " ")
            fragment.append(clause)
        }
        fragment.append(returningClause(returning))
        return fragment
    }
}

extension Insert: Sendable {}

extension Insert: TriggerStepStatement {
    func checkedTriggerStepFragment() throws -> QueryFragment {
        if let failure { throw failure }
        return fragment(naming: Into.triggerStepTableFragment)
    }
}

/// Where the rows of an insert come from.
enum InsertSource: Sendable {
    /// One fragment per column per row.
    case values([[QueryFragment]])
    /// A statement producing the rows, without parentheses.
    case select(QueryFragment)
}

extension Insert {
    /// Rows of values encoded by `encode`, or the first encoding error.
    static func encoding<Row>(
        _ rows: [Row], resolution: ConflictResolution?, _ encode: (Row, inout ColumnEncoder) throws -> Void
    ) -> Insert<Into, ()> {
        do {
            let fragments = try rows.map { row in
                try Into.encodedColumnValues { try encode(row, &$0) }.map(QueryFragment.init(binding:))
            }
            return Insert<Into, ()>(resolution: resolution, columnNames: Into.columnNames, source: .values(fragments))
        } catch {
            return Insert<Into, ()>(resolution: resolution, columnNames: Into.columnNames, source: .values([]), failure: error)
        }
    }
}

extension Table {
    /// `INSERT INTO "table" (every written column) VALUES (…), (…)`: the records the closure
    /// lists, one per line or as an array.
    ///
    /// ```swift
    /// Player.insert { Player(id: 1, gameID: 1, name: "Ann", score: 12) }
    /// Player.insert(or: .ignore) { players }
    /// ```
    ///
    /// - Parameters:
    ///   - resolution: What to do when a row violates a constraint: `INSERT OR IGNORE`,
    ///     `INSERT OR REPLACE`, …; nil for SQLite's default (abort).
    ///   - records: The rows. Zero rows make an empty statement that executes nothing.
    public static func insert(
        or resolution: ConflictResolution? = nil,
        @InsertValuesBuilder<Self> _ records: () -> [Self]
    ) -> Insert<Self, ()> {
        Insert<Self, ()>.encoding(records(), resolution: resolution) { try $0.encodeColumns(to: &$1) }
    }

    /// `INSERT INTO "table" ("a", "b") VALUES (?, ?), …`: values for some columns, the others
    /// taking their defaults. The first closure chooses the columns; each line of the second is
    /// one row, a tuple with one value per column (a single value for a single column).
    ///
    /// ```swift
    /// Player.insert { ($0.gameID, $0.name) } values: {
    ///     (1, "Ann")
    ///     (1, "Bob")
    /// }
    /// ```
    public static func insert<each Value: QueryBindable>(
        or resolution: ConflictResolution? = nil,
        _ columns: (TableColumns) -> (repeat TableColumn<Self, each Value>),
        @InsertValuesBuilder<(repeat each Value)> values: () -> [(repeat each Value)]
    ) -> Insert<Self, ()> {
        let chosen = columns(Self.columns)
        var names: [String] = []
        for column in repeat each chosen {
            names.append(column.name)
        }
        let rows = values().map { row in
            var fragments: [QueryFragment] = []
            for value in repeat each row {
                fragments.append(value.queryFragment)
            }
            return fragments
        }
        return Insert(resolution: resolution, columnNames: names, source: .values(rows))
    }

    /// `INSERT INTO "table" ("a", "b") SELECT …`: the rows of a statement whose columns match
    /// the chosen ones in number and type.
    ///
    /// ```swift
    /// Player.insert { ($0.gameID, $0.name) } select: {
    ///     Game.where { $0.title.eq("Go") }.select { ($0.id, $0.title) }
    /// }
    /// ```
    public static func insert<each Value, Rows: QueryStatement>(
        or resolution: ConflictResolution? = nil,
        _ columns: (TableColumns) -> (repeat TableColumn<Self, each Value>),
        select rows: () -> Rows
    ) -> Insert<Self, ()> where Rows.QueryValue == (repeat each Value) {
        let chosen = columns(Self.columns)
        var names: [String] = []
        for column in repeat each chosen {
            names.append(column.name)
        }
        let statement = rows()
        do {
            return Insert(resolution: resolution, columnNames: names, source: .select(try statement.checkedStatementFragment()))
        } catch {
            return Insert(resolution: resolution, columnNames: names, source: .select(statement.statementFragment), failure: error)
        }
    }
}

extension PrimaryKeyedTable {
    /// `INSERT INTO "table" (every written column) VALUES (…)`: drafts, rows whose primary key
    /// may be nil. A nil key binds NULL, and SQLite assigns the key (the rowid of an
    /// `INTEGER PRIMARY KEY`); read it back with `returning(\.id)`.
    ///
    /// ```swift
    /// let id = try Player.insert { Player.Draft(gameID: 1, name: "Eve") }
    ///     .returning(\.id)
    ///     .fetchOne(db)
    /// ```
    public static func insert(
        or resolution: ConflictResolution? = nil,
        @InsertValuesBuilder<Draft> _ drafts: () -> [Draft]
    ) -> Insert<Self, ()> {
        Insert<Self, ()>.encoding(drafts(), resolution: resolution) { try $0.encodeColumns(to: &$1) }
    }
}
