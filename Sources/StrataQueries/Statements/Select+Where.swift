extension Select {
    /// Adds a condition: `WHERE …`. Several `where` calls are joined with AND.
    ///
    /// ```swift
    /// Player.all.where { $0.score > 10 }
    /// Game.join(Player.all) { $0.id.eq($1.gameID) }.where { $1.name.like("A%") }
    /// ```
    public func `where`<each J: QuerySource>(
        _ predicate: ((From.TableColumns, repeat (each J).TableColumns)) -> some QueryExpression<Bool>
    ) -> Self where Joins == (repeat each J) {
        var copy = self
        copy.wheres.append(predicate((From.columns, repeat (each J).columns)).queryFragment)
        return copy
    }

    /// Adds a condition on an optional boolean (NULL is false): `WHERE …`.
    public func `where`<each J: QuerySource>(
        _ predicate: ((From.TableColumns, repeat (each J).TableColumns)) -> some QueryExpression<Bool?>
    ) -> Self where Joins == (repeat each J) {
        var copy = self
        copy.wheres.append(predicate((From.columns, repeat (each J).columns)).queryFragment)
        return copy
    }

    /// Adds a condition on the groups: `HAVING …`.
    public func having<each J: QuerySource>(
        _ predicate: ((From.TableColumns, repeat (each J).TableColumns)) -> some QueryExpression<Bool>
    ) -> Self where Joins == (repeat each J) {
        var copy = self
        copy.havings.append(predicate((From.columns, repeat (each J).columns)).queryFragment)
        return copy
    }
}

extension Table {
    /// The rows that match a condition.
    public static func `where`(_ predicate: (TableColumns) -> some QueryExpression<Bool>) -> Select<Self, Self, ()> {
        all.where(predicate)
    }
}

extension PrimaryKeyedTable {
    /// The row with a primary key: `WHERE "table"."id" = ?`.
    public static func find(_ id: some QueryExpression<TableColumns.PrimaryKey>) -> Select<Self, Self, ()> {
        all.where { $0.primaryKey.eq(id) }
    }

    /// The row with a primary key value: `WHERE "table"."id" = ?`.
    ///
    /// The same statement as the expression overload; a key value is kept as a value, so
    /// `find(id).fetchOne(db)` with nothing added runs the table's prepared by-key statement
    /// directly instead of building and looking up its SQL text on every call.
    @inlinable
    public static func find(_ id: TableColumns.PrimaryKey) -> Select<Self, Self, ()> {
        var select = all
        select.primaryKeyLookup = PrimaryKeyLookup(key: id.databaseValue, table: Self.self)
        return select
    }

    /// The rows with any of the primary keys: `WHERE "table"."id" IN (?, ?, …)`.
    public static func find(_ ids: some Sequence<TableColumns.PrimaryKey>) -> Select<Self, Self, ()> {
        all.where { $0.primaryKey.in(ids) }
    }
}
