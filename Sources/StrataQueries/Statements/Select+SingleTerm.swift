// Overloads of the joined-table closures that return one term instead of a tuple: Swift
// cannot infer a one-element result pack from a closure that destructures its tuple argument.
extension Select {
    /// Adds one sort term over the joined tables: `.order { $1.count().desc() }`.
    public func order<each J: QuerySource, Term: QueryExpression>(
        by term: ((From.TableColumns, repeat (each J).TableColumns)) -> Term
    ) -> Self where Joins == (repeat each J) {
        var copy = self
        copy.orders.append(term((From.columns, repeat (each J).columns)).queryFragment)
        return copy
    }

    /// Groups rows by one expression over the joined tables.
    public func group<each J: QuerySource, Term: QueryExpression>(
        by term: ((From.TableColumns, repeat (each J).TableColumns)) -> Term
    ) -> Self where Joins == (repeat each J) {
        var copy = self
        copy.groups.append(term((From.columns, repeat (each J).columns)).queryFragment)
        return copy
    }

    /// Chooses one expression over the joined tables as each row:
    /// `.select { GameRow.Columns(game: $0, playerCount: $1.count()) }`.
    public func select<each J: QuerySource, Value: QueryExpression>(
        _ selection: ((From.TableColumns, repeat (each J).TableColumns)) -> Value
    ) -> Select<Value.QueryValue, From, Joins> where Joins == (repeat each J) {
        Select<Value.QueryValue, From, Joins>(copying: self, selection: [selection((From.columns, repeat (each J).columns)).queryFragment])
    }
}
