import StrataSQLite

extension Select {
    /// Chooses what each row is: one expression, or a tuple of them. Replaces the columns
    /// selected so far (call it after joins).
    ///
    /// ```swift
    /// Player.all.select { ($0.name, $0.score) }                   // [(String, Int)]
    /// Game.group(by: \.id).leftJoin(Player.all) { $0.id.eq($1.gameID) }
    ///     .select { Row.Columns(game: $0, playerCount: $1.count()) }
    /// ```
    public func select<each J: QuerySource, each Value: QueryExpression>(
        _ selection: ((From.TableColumns, repeat (each J).TableColumns)) -> (repeat each Value)
    ) -> Select<(repeat (each Value).QueryValue), From, Joins> where Joins == (repeat each J) {
        let result = selection((From.columns, repeat (each J).columns))
        var fragments: [QueryFragment] = []
        for value in repeat each result {
            fragments.append(value.queryFragment)
        }
        return Select<(repeat (each Value).QueryValue), From, Joins>(copying: self, selection: fragments)
    }

    /// Selects one column of the `FROM` table: `Player.all.select(\.name)`.
    public func select<Value>(_ column: KeyPath<From.TableColumns, TableColumn<From, Value>>) -> Select<Value, From, Joins> {
        Select<Value, From, Joins>(copying: self, selection: [From.columns[keyPath: column].queryFragment])
    }

    /// The number of rows the statement would return: `SELECT count(*) FROM "table" WHERE …`,
    /// or `SELECT count(*) FROM (…)` around a statement whose rows are not simply its table's
    /// matching rows (grouped, distinct or limited).
    public func fetchCount(_ db: Database) throws -> Int {
        var fragment: QueryFragment
        if groups.isEmpty, havings.isEmpty, !isDistinct, limit == nil, offset == nil {
            var counting = Select<Int, From, Joins>(copying: self, selection: [QueryFragment(verbatim: "count(*)")])
            counting.orders = []
            fragment = counting.statementFragment
        } else {
            fragment = QueryFragment(verbatim: "SELECT count(*) FROM (")
            fragment.append(statementFragment)
            fragment.append(verbatim: ")")
        }
        return try Int.fetchOne(db, sql: fragment.sql, arguments: fragment.statementArguments) ?? 0
    }

    /// Whether the statement returns any row: `EXISTS (…)`.
    public func exists() -> SQLQueryExpression<Bool> {
        SQLQueryExpression("EXISTS " + queryFragment)
    }

    /// `SELECT count(*) …` with this statement's joins, filters and groups.
    public func count() -> Select<Int, From, Joins> {
        Select<Int, From, Joins>(copying: self, selection: [QueryFragment(verbatim: "count(*)")])
    }
}

extension Table {
    /// Chooses what each row is: `Player.select { ($0.name, $0.score) }`.
    public static func select<each Value: QueryExpression>(
        _ selection: (TableColumns) -> (repeat each Value)
    ) -> Select<(repeat (each Value).QueryValue), Self, ()> {
        all.select(selection)
    }

    /// One column of every row: `Player.select(\.name)`.
    public static func select<Value>(_ column: KeyPath<TableColumns, TableColumn<Self, Value>>) -> Select<Value, Self, ()> {
        all.select(column)
    }

    /// `SELECT count(*) FROM "table"`.
    public static func count() -> Select<Int, Self, ()> {
        all.count()
    }

    /// The number of rows in the table.
    public static func fetchCount(_ db: Database) throws -> Int {
        try count().fetchOne(db) ?? 0
    }
}
