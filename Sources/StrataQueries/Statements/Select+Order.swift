extension Select {
    /// Adds sort terms: `ORDER BY …`. Return one term or a tuple of them; each is a column or
    /// expression, optionally with `.asc()`, `.desc()` and `nulls:`.
    ///
    /// ```swift
    /// Player.order { ($0.score.desc(), $0.name) }
    /// ```
    public func order<each J: QuerySource, each Term: QueryExpression>(
        by terms: ((From.TableColumns, repeat (each J).TableColumns)) -> (repeat each Term)
    ) -> Self where Joins == (repeat each J) {
        var copy = self
        let result = terms((From.columns, repeat (each J).columns))
        for term in repeat each result {
            copy.orders.append(term.queryFragment)
        }
        return copy
    }

    /// Adds one column of the `FROM` table as a sort term: `.order(by: \.title)`.
    public func order<Value>(by column: KeyPath<From.TableColumns, TableColumn<From, Value>>) -> Self {
        var copy = self
        copy.orders.append(From.columns[keyPath: column].queryFragment)
        return copy
    }

    /// Groups rows: `GROUP BY …`. Return one expression or a tuple of them.
    public func group<each J: QuerySource, each Term: QueryExpression>(
        by terms: ((From.TableColumns, repeat (each J).TableColumns)) -> (repeat each Term)
    ) -> Self where Joins == (repeat each J) {
        var copy = self
        let result = terms((From.columns, repeat (each J).columns))
        for term in repeat each result {
            copy.groups.append(term.queryFragment)
        }
        return copy
    }

    /// Groups rows by one column of the `FROM` table: `.group(by: \.id)`.
    public func group<Value>(by column: KeyPath<From.TableColumns, TableColumn<From, Value>>) -> Self {
        var copy = self
        copy.groups.append(From.columns[keyPath: column].queryFragment)
        return copy
    }

    /// Keeps at most `count` rows, after skipping `offset`: `LIMIT ? OFFSET ?`.
    public func limit(_ count: Int, offset: Int? = nil) -> Self {
        var copy = self
        copy.limit = QueryFragment(binding: .integer(Int64(count)))
        copy.offset = offset.map { QueryFragment(binding: .integer(Int64($0))) }
        return copy
    }

    /// Keeps at most `count` rows, computed in SQL, after skipping `offset`.
    public func limit(_ count: some QueryExpression<Int>, offset: (some QueryExpression<Int>)? = Int?.none) -> Self {
        var copy = self
        copy.limit = count.queryFragment
        copy.offset = offset?.queryFragment
        return copy
    }

    /// Removes duplicate rows: `SELECT DISTINCT`.
    public func distinct(_ isDistinct: Bool = true) -> Self {
        var copy = self
        copy.isDistinct = isDistinct
        return copy
    }
}

extension Table {
    /// Every row, sorted: `Player.order { $0.score.desc() }`.
    public static func order<each Term: QueryExpression>(by terms: (TableColumns) -> (repeat each Term)) -> Select<Self, Self, ()> {
        all.order(by: terms)
    }

    /// Every row, sorted by one column: `Game.order(by: \.title)`.
    public static func order<Value>(by column: KeyPath<TableColumns, TableColumn<Self, Value>>) -> Select<Self, Self, ()> {
        all.order(by: column)
    }

    /// Every row, grouped: `Game.group(by: \.id)`.
    public static func group<Value>(by column: KeyPath<TableColumns, TableColumn<Self, Value>>) -> Select<Self, Self, ()> {
        all.group(by: column)
    }

    /// Every row, grouped by expressions.
    public static func group<each Term: QueryExpression>(by terms: (TableColumns) -> (repeat each Term)) -> Select<Self, Self, ()> {
        all.group(by: terms)
    }

    /// At most `count` rows.
    public static func limit(_ count: Int, offset: Int? = nil) -> Select<Self, Self, ()> {
        all.limit(count, offset: offset)
    }

    /// Distinct rows.
    public static func distinct() -> Select<Self, Self, ()> {
        all.distinct()
    }
}
