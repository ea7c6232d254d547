import StrataSQLite

/// A statement with common table expressions: `WITH "name" (columns…) AS (…) <query>`.
///
/// Each expression is a statement whose rows are a `@Table` type: the type names the CTE and
/// its columns, and the final query reads it like a table.
///
/// ```swift
/// @Table @Selection struct HighScorer { let playerID: Int; let score: Int }
/// let query = With(
///     Player.where { $0.score > 10 }.select { HighScorer.Columns(playerID: $0.id, score: $0.score) }
/// ) {
///     HighScorer.order { $0.score.desc() }
/// }
/// try query.fetchAll(db)      // [HighScorer]
/// ```
public struct With<Query: QueryStatement>: QueryStatement {
    public typealias QueryValue = Query.QueryValue

    let definitions: [QueryFragment]
    let query: Query
    /// Why a common table expression could not be built; running the statement throws it.
    let failure: (any Error)?

    /// Defines each CTE, then the query that reads them.
    public init<each Expression: QueryStatement>(
        _ expressions: repeat each Expression, query: () -> Query
    ) where repeat (each Expression).QueryValue: Table {
        var definitions: [QueryFragment] = []
        var failure: (any Error)?
        for expression in repeat each expressions {
            do {
                definitions.append(try Self.definition(of: expression))
            } catch {
                failure = failure ?? error
                definitions.append(QueryFragment())
            }
        }
        self.definitions = definitions
        self.failure = failure
        self.query = query()
    }

    // A CTE's name is never schema-qualified: it names the expression, not a stored table.
    private static func definition<Expression: QueryStatement>(of expression: Expression) throws -> QueryFragment
    where Expression.QueryValue: Table {
        let table = Expression.QueryValue.self
        var fragment = QueryFragment(
            verbatim:
                table.tableName.quotedIdentifier + " ("
                + table.selectedColumnNames.map(\.quotedIdentifier).joined(separator: ", ") + ") AS (")
        fragment.append(try expression.checkedStatementFragment())
        fragment.append(verbatim: ")")
        return fragment
    }

    public var statementFragment: QueryFragment {
        fragment(reading: query.statementFragment)
    }

    public func checkedStatementFragment() throws -> QueryFragment {
        if let failure { throw failure }
        return fragment(reading: try query.checkedStatementFragment())
    }

    /// `WITH <definitions> <query>`.
    private func fragment(reading query: QueryFragment) -> QueryFragment {
        var fragment = QueryFragment(verbatim: "WITH ")
        fragment.append(definitions.joined(separator: ", "))
        fragment.append(verbatim: " ")
        fragment.append(query)
        return fragment
    }
}
