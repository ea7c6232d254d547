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

    /// Defines each CTE, then the query that reads them.
    public init<each Expression: QueryStatement>(
        _ expressions: repeat each Expression, query: () -> Query
    ) where repeat (each Expression).QueryValue: Table {
        var definitions: [QueryFragment] = []
        for expression in repeat each expressions {
            definitions.append(Self.definition(of: expression))
        }
        self.definitions = definitions
        self.query = query()
    }

    private static func definition<Expression: QueryStatement>(of expression: Expression) -> QueryFragment
    where Expression.QueryValue: Table {
        let table = Expression.QueryValue.self
        var fragment = QueryFragment(verbatim:
            table.tableName.quotedSQLIdentifier + " ("
            + table.selectedColumnNames.map(\.quotedSQLIdentifier).joined(separator: ", ") + ") AS ")
        fragment.append(expression.queryFragment)
        return fragment
    }

    public var statementFragment: QueryFragment {
        var fragment = QueryFragment(verbatim: "WITH ")
        fragment.append(definitions.joined(separator: ", "))
        fragment.append(verbatim: " ")
        fragment.append(query.statementFragment)
        return fragment
    }
}
