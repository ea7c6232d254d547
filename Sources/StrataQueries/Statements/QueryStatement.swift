import StrataSQLite

/// A complete SQL statement built by the query builder: a select, insert, update or delete.
///
/// Statements run on a connection inside `read` / `write`:
///
/// ```swift
/// let players = try await database.read { db in try Player.order(by: \.name).fetchAll(db) }
/// try await database.write { db in try Player.find(id).delete().execute(db) }
/// ```
///
/// The text uses `?` for every value, so a statement of the same shape reuses the connection's
/// prepared-statement cache. A statement is also an expression: `(SELECT …)` as a subquery.
///
/// A statement with nothing to do (an insert of zero rows) has empty SQL: running it executes
/// nothing, `fetchAll` returns no rows and `fetchOne` returns nil.
public protocol QueryStatement<QueryValue>: QueryExpression {
    /// The statement's SQL without the parentheses a subquery gets.
    var statementFragment: QueryFragment { get }

    /// The statement's SQL, checked before it runs: `execute`, `fetchAll` and `fetchOne` call
    /// it, and a statement built from input it cannot express (a record whose encoding fails,
    /// an update without assignments) throws here instead of running. By default, the
    /// ``statementFragment``.
    func checkedStatementFragment() throws -> QueryFragment

    /// The checked statements that run this one on `db`, in order: ``execute(_:)``,
    /// `fetchAll` and `fetchOne` run each of them, inside one savepoint when there are several.
    /// By default, the ``checkedStatementFragment()`` alone; an ``Insert`` whose rows bind more
    /// values than one statement may (`Database.maximumBindingCount`) splits them
    /// here.
    ///
    /// A requirement, not only an extension method, so the split happens whatever type the
    /// statement is run through: `Insert`, `some QueryStatement` or `any QueryStatement`.
    func checkedStatementFragments(for db: Database) throws -> [QueryFragment]
}

extension QueryStatement {
    public func checkedStatementFragment() throws -> QueryFragment { statementFragment }

    public func checkedStatementFragments(for db: Database) throws -> [QueryFragment] {
        [try checkedStatementFragment()]
    }

    /// Runs `body` with each statement of ``checkedStatementFragments(for:)`` that is not
    /// empty, inside one savepoint when there are several, so the whole runs or nothing does.
    @usableFromInline
    func forEachCheckedFragment(_ db: Database, _ body: (QueryFragment) throws -> Void) throws {
        let fragments = try checkedStatementFragments(for: db).filter { !$0.isEmpty }
        guard fragments.count > 1 else {
            if let fragment = fragments.first { try body(fragment) }
            return
        }
        try db.savepoint {
            for fragment in fragments { try body(fragment) }
        }
    }

    /// `(statement)`: the statement as a subquery.
    public var queryFragment: QueryFragment {
        var fragment = QueryFragment(verbatim: "(")
        fragment.append(statementFragment)
        fragment.append(verbatim: ")")
        return fragment
    }

    /// The statement's SQL text, for logging and snapshot tests.
    public var sql: String { statementFragment.sql }

    /// The values the statement binds, in order.
    public var bindings: [DatabaseValue] { statementFragment.bindings }

    /// Runs the statement, discarding any rows. An empty statement executes nothing.
    public func execute(_ db: Database) throws {
        try forEachCheckedFragment(db) { fragment in
            try db.execute(sql: fragment.sql, arguments: fragment.statementArguments)
        }
    }
}

extension QueryStatement where QueryValue: QueryDecodable {
    /// Every row, decoded by index.
    @inlinable
    public func fetchAll(_ db: Database) throws -> [QueryValue] {
        var rows: [QueryValue] = []
        try forEachCheckedFragment(db) { fragment in
            rows += try db.fetchAll(sql: fragment.sql, arguments: fragment.statementArguments) { row in
                var decoder = QueryDecoder(row: row)
                return try QueryValue(decoder: &decoder)
            }
        }
        return rows
    }

    /// The first row, or nil.
    @inlinable
    public func fetchOne(_ db: Database) throws -> QueryValue? {
        // Every statement runs (an insert's later batches too); the first row is the result.
        var first: QueryValue?
        try forEachCheckedFragment(db) { fragment in
            let row = try db.fetchOne(sql: fragment.sql, arguments: fragment.statementArguments) { row in
                var decoder = QueryDecoder(row: row)
                return try QueryValue(decoder: &decoder)
            }
            if first == nil { first = row }
        }
        return first
    }
}

extension QueryStatement {
    /// Every row of a statement that selects several values, as tuples.
    public func fetchAll<each Value: QueryDecodable>(_ db: Database) throws -> [(repeat each Value)]
    where QueryValue == (repeat each Value) {
        var rows: [(repeat each Value)] = []
        try forEachCheckedFragment(db) { fragment in
            rows += try db.fetchAll(sql: fragment.sql, arguments: fragment.statementArguments) { row in
                var decoder = QueryDecoder(row: row)
                return (repeat try decoder.read((each Value).self))
            }
        }
        return rows
    }

    /// The first row of a statement that selects several values, as a tuple, or nil.
    public func fetchOne<each Value: QueryDecodable>(_ db: Database) throws -> (repeat each Value)?
    where QueryValue == (repeat each Value) {
        // Every statement runs (an insert's later batches too); the first row is the result.
        var first: (repeat each Value)?
        try forEachCheckedFragment(db) { fragment in
            let row = try db.fetchOne(sql: fragment.sql, arguments: fragment.statementArguments) { row in
                var decoder = QueryDecoder(row: row)
                return (repeat try decoder.read((each Value).self))
            }
            if first == nil { first = row }
        }
        return first
    }
}
