// The closure-taking methods of a statement without joins. Closures over joined tables take
// one tuple of column sets (which Swift lets a closure literal destructure into `$0, $1, …`);
// with a single table that tuple would have one element, which Swift cannot destructure, so
// these overloads take the table's columns directly.
extension Select where Joins == () {
    /// Adds a condition: `WHERE …`. Several `where` calls are joined with AND.
    public func `where`(_ predicate: (From.TableColumns) -> some QueryExpression<Bool>) -> Self {
        var copy = self
        copy.wheres.append(predicate(From.columns).queryFragment)
        return copy
    }

    /// Adds a condition on an optional boolean (NULL is false): `WHERE …`.
    public func `where`(_ predicate: (From.TableColumns) -> some QueryExpression<Bool?>) -> Self {
        var copy = self
        copy.wheres.append(predicate(From.columns).queryFragment)
        return copy
    }

    /// Adds a condition on the groups: `HAVING …`.
    public func having(_ predicate: (From.TableColumns) -> some QueryExpression<Bool>) -> Self {
        var copy = self
        copy.havings.append(predicate(From.columns).queryFragment)
        return copy
    }

    /// Adds sort terms: `ORDER BY …`: `.order { ($0.score.desc(), $0.name) }`.
    public func order<each Term: QueryExpression>(by terms: (From.TableColumns) -> (repeat each Term)) -> Self {
        var copy = self
        let result = terms(From.columns)
        for term in repeat each result {
            copy.orders.append(term.queryFragment)
        }
        return copy
    }

    /// Groups rows: `GROUP BY …`: `.group { ($0.gameID, $0.name) }`.
    public func group<each Term: QueryExpression>(by terms: (From.TableColumns) -> (repeat each Term)) -> Self {
        var copy = self
        let result = terms(From.columns)
        for term in repeat each result {
            copy.groups.append(term.queryFragment)
        }
        return copy
    }

    /// Chooses what each row is, as a tuple: `.select { ($0.name, $0.score) }`.
    public func select<each Value: QueryExpression>(
        _ selection: (From.TableColumns) -> (repeat each Value)
    ) -> Select<(repeat (each Value).QueryValue), From, ()> {
        let result = selection(From.columns)
        var fragments: [QueryFragment] = []
        for value in repeat each result {
            fragments.append(value.queryFragment)
        }
        return Select<(repeat (each Value).QueryValue), From, ()>(copying: self, selection: fragments)
    }

    // One-term forms: more specific than both the tuple forms above and the joined-table
    // one-term forms, which would otherwise be ambiguous for a statement without joins.
    /// Adds one sort term: `.order { $0.score.desc() }`.
    public func order<Term: QueryExpression>(by term: (From.TableColumns) -> Term) -> Self {
        var copy = self
        copy.orders.append(term(From.columns).queryFragment)
        return copy
    }

    /// Groups rows by one expression: `.group { $0.gameID }`.
    public func group<Term: QueryExpression>(by term: (From.TableColumns) -> Term) -> Self {
        var copy = self
        copy.groups.append(term(From.columns).queryFragment)
        return copy
    }

    /// Chooses what each row is, as one expression: `.select { $0.score.max() }`.
    public func select<Value: QueryExpression>(_ selection: (From.TableColumns) -> Value) -> Select<Value.QueryValue, From, ()> {
        Select<Value.QueryValue, From, ()>(copying: self, selection: [selection(From.columns).queryFragment])
    }
}
