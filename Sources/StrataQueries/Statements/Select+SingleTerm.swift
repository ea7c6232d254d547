// Overloads of the joined-table closures that return one term instead of a tuple: Swift
// cannot infer a one-element result pack from a closure that destructures its tuple argument.
extension Select {
    public func order<each J: QuerySource, Term: QueryExpression>(
        by term: ((From.TableColumns, repeat (each J).TableColumns)) -> Term
    ) -> Self where Joins == (repeat each J) {
        var copy = self
        copy.orders.append(term((From.columns, repeat (each J).columns)).queryFragment)
        return copy
    }

    public func group<each J: QuerySource, Term: QueryExpression>(
        by term: ((From.TableColumns, repeat (each J).TableColumns)) -> Term
    ) -> Self where Joins == (repeat each J) {
        var copy = self
        copy.groups.append(term((From.columns, repeat (each J).columns)).queryFragment)
        return copy
    }

    public func select<each J: QuerySource, Value: QueryExpression>(
        _ selection: ((From.TableColumns, repeat (each J).TableColumns)) -> Value
    ) -> Select<Value.QueryValue, From, Joins> where Joins == (repeat each J) {
        Select<Value.QueryValue, From, Joins>(copying: self, selection: [selection((From.columns, repeat (each J).columns)).queryFragment])
    }
}
