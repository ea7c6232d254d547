/// The columns of a table on the nullable side of an outer join: every column's value becomes
/// optional, because an unmatched row reads NULL in each.
///
/// ```swift
/// Game.leftJoin(Player.all) { $0.id.eq($1.gameID) }
///     .select { ($0.title, $1.score.ifnull(0)) }     // $1.score is an Int? expression
/// ```
@dynamicMemberLookup
public struct NullableColumns<Base: Table>: QueryExpression {
    public typealias QueryValue = Base?

    /// The nullable columns of `Base`.
    public init() {}

    public var queryFragment: QueryFragment { Base.columns.queryFragment }

    /// A column, made optional.
    public subscript<Value>(dynamicMember keyPath: KeyPath<Base.TableColumns, TableColumn<Base, Value>>) -> TableColumn<Base, Value?> {
        TableColumn(Base.columns[keyPath: keyPath].name)
    }

    /// An optional column stays singly optional.
    public subscript<Value>(dynamicMember keyPath: KeyPath<Base.TableColumns, TableColumn<Base, Value?>>) -> TableColumn<Base, Value?> {
        Base.columns[keyPath: keyPath]
    }

    /// A computed expression of the table's columns (`var isShared: some QueryExpression<Bool>`),
    /// made optional.
    public subscript<Expression: QueryExpression>(dynamicMember keyPath: KeyPath<Base.TableColumns, Expression>) -> SQLQueryExpression<
        Expression.QueryValue?
    > {
        SQLQueryExpression(Base.columns[keyPath: keyPath].queryFragment)
    }
}
