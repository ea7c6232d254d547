// `RETURNING`: the rows an insert, update or delete wrote, read back in the same statement.
//
// The closure chooses what each row is, as `select` does: one expression, a tuple of them, or
// `$0` (or `\.self`) for the whole row. Run the statement with `fetchAll(db)` / `fetchOne(db)`
// to decode the rows, or `execute(db)` to ignore them. An insert returns the rows as stored,
// with the keys and defaults SQLite assigned; an update returns rows after the update; a
// delete returns the rows deleted.
//
// ```swift
// let players = try Player.insert { drafts }.returning { $0 }.fetchAll(db)           // [Player]
// let scores = try Player.update { $0.score += 1 }.returning { ($0.id, $0.score) }.fetchAll(db)
// let name = try Player.find(id).delete().returning(\.name).fetchOne(db)             // String?
// ```
//
// Calling `returning` again replaces the previous choice.

extension Insert {
    /// `… RETURNING <expressions>`: one expression or a tuple of them per written row.
    public func returning<each Value: QueryExpression>(
        _ selection: (Into.TableColumns) -> (repeat each Value)
    ) -> Insert<Into, (repeat (each Value).QueryValue)> {
        let result = selection(Into.columns)
        var fragments: [QueryFragment] = []
        for value in repeat each result {
            fragments.append(value.queryFragment)
        }
        return Insert<Into, (repeat (each Value).QueryValue)>(copying: self, returning: fragments)
    }

    /// `… RETURNING <column>`: `\.id`, or `\.self` for the whole row.
    public func returning<Value: QueryExpression>(_ keyPath: KeyPath<Into.TableColumns, Value>) -> Insert<Into, Value.QueryValue> {
        Insert<Into, Value.QueryValue>(copying: self, returning: [Into.columns[keyPath: keyPath].queryFragment])
    }
}

extension Update {
    /// `… RETURNING <expressions>`: one expression or a tuple of them per updated row, with
    /// the values after the update.
    public func returning<each Value: QueryExpression>(
        _ selection: (Root.TableColumns) -> (repeat each Value)
    ) -> Update<Root, (repeat (each Value).QueryValue)> {
        let result = selection(Root.columns)
        var fragments: [QueryFragment] = []
        for value in repeat each result {
            fragments.append(value.queryFragment)
        }
        return Update<Root, (repeat (each Value).QueryValue)>(copying: self, returning: fragments)
    }

    /// `… RETURNING <column>`: `\.id`, or `\.self` for the whole row.
    public func returning<Value: QueryExpression>(_ keyPath: KeyPath<Root.TableColumns, Value>) -> Update<Root, Value.QueryValue> {
        Update<Root, Value.QueryValue>(copying: self, returning: [Root.columns[keyPath: keyPath].queryFragment])
    }
}

extension Delete {
    /// `… RETURNING <expressions>`: one expression or a tuple of them per deleted row.
    public func returning<each Value: QueryExpression>(
        _ selection: (From.TableColumns) -> (repeat each Value)
    ) -> Delete<From, (repeat (each Value).QueryValue)> {
        let result = selection(From.columns)
        var fragments: [QueryFragment] = []
        for value in repeat each result {
            fragments.append(value.queryFragment)
        }
        return Delete<From, (repeat (each Value).QueryValue)>(copying: self, returning: fragments)
    }

    /// `… RETURNING <column>`: `\.id`, or `\.self` for the whole row.
    public func returning<Value: QueryExpression>(_ keyPath: KeyPath<From.TableColumns, Value>) -> Delete<From, Value.QueryValue> {
        Delete<From, Value.QueryValue>(copying: self, returning: [From.columns[keyPath: keyPath].queryFragment])
    }
}
