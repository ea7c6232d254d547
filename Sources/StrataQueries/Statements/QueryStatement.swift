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
}

extension QueryStatement {
    public func checkedStatementFragment() throws -> QueryFragment { statementFragment }

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
        let fragment = try checkedStatementFragment()
        guard !fragment.isEmpty else { return }
        try db.execute(sql: fragment.sql, arguments: fragment.statementArguments)
    }
}

extension QueryStatement where QueryValue: QueryDecodable {
    /// Every row, decoded by index.
    @inlinable
    public func fetchAll(_ db: Database) throws -> [QueryValue] {
        let fragment = try checkedStatementFragment()
        guard !fragment.isEmpty else { return [] }
        return try db.fetchAll(sql: fragment.sql, arguments: fragment.statementArguments) { row in
            var decoder = QueryDecoder(row: row)
            return try QueryValue(decoder: &decoder)
        }
    }

    /// The first row, or nil.
    @inlinable
    public func fetchOne(_ db: Database) throws -> QueryValue? {
        let fragment = try checkedStatementFragment()
        guard !fragment.isEmpty else { return nil }
        return try db.fetchOne(sql: fragment.sql, arguments: fragment.statementArguments) { row in
            var decoder = QueryDecoder(row: row)
            return try QueryValue(decoder: &decoder)
        }
    }
}

extension QueryStatement {
    /// Every row of a statement that selects several values, as tuples.
    public func fetchAll<each Value: QueryDecodable>(_ db: Database) throws -> [(repeat each Value)]
    where QueryValue == (repeat each Value) {
        let fragment = try checkedStatementFragment()
        guard !fragment.isEmpty else { return [] }
        return try db.fetchAll(sql: fragment.sql, arguments: fragment.statementArguments) { row in
            var decoder = QueryDecoder(row: row)
            return (repeat try decoder.read((each Value).self))
        }
    }

    /// The first row of a statement that selects several values, as a tuple, or nil.
    public func fetchOne<each Value: QueryDecodable>(_ db: Database) throws -> (repeat each Value)?
    where QueryValue == (repeat each Value) {
        let fragment = try checkedStatementFragment()
        guard !fragment.isEmpty else { return nil }
        return try db.fetchOne(sql: fragment.sql, arguments: fragment.statementArguments) { row in
            var decoder = QueryDecoder(row: row)
            return (repeat try decoder.read((each Value).self))
        }
    }
}
