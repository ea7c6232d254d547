extension Select {
    /// `JOIN`: rows of `other` matching the condition. The joined table's columns are appended
    /// to the selection and its filters, groups and order to this statement's.
    ///
    /// ```swift
    /// Game.all.join(Player.all) { $0.id.eq($1.gameID) }     // rows of (Game, Player)
    /// ```
    public func join<each C, each J: QuerySource, Other: Table>(
        _ other: Select<Other, Other, ()>,
        on condition: ((From.TableColumns, repeat (each J).TableColumns, Other.TableColumns)) -> some QueryExpression<Bool>
    ) -> Select<(repeat each C, Other), From, (repeat each J, Other)>
    where Columns == (repeat each C), Joins == (repeat each J) {
        joining(other, kind: "JOIN", condition: condition((From.columns, repeat (each J).columns, Other.columns)).queryFragment)
    }

    /// `LEFT JOIN`: every row of this statement, with the matching rows of `other` or NULLs.
    /// The joined table's columns become optional, in closures and in decoded rows.
    ///
    /// ```swift
    /// Game.all.leftJoin(Player.all) { $0.id.eq($1.gameID) }  // rows of (Game, Player?)
    /// ```
    public func leftJoin<each C, each J: QuerySource, Other: Table>(
        _ other: Select<Other, Other, ()>,
        on condition: ((From.TableColumns, repeat (each J).TableColumns, Other?.TableColumns)) -> some QueryExpression<Bool>
    ) -> Select<(repeat each C, Other?), From, (repeat each J, Other?)>
    where Columns == (repeat each C), Joins == (repeat each J) {
        joining(other, kind: "LEFT JOIN", condition: condition((From.columns, repeat (each J).columns, Other?.columns)).queryFragment)
    }

    /// `RIGHT JOIN`: every row of `other`, with the matching rows of this statement or NULLs.
    /// The columns selected so far become optional in decoded rows.
    public func rightJoin<each C, each J: QuerySource, Other: Table>(
        _ other: Select<Other, Other, ()>,
        on condition: ((From.TableColumns, repeat (each J).TableColumns, Other.TableColumns)) -> some QueryExpression<Bool>
    ) -> Select<(repeat Optional<each C>, Other), From, (repeat each J, Other)>
    where Columns == (repeat each C), Joins == (repeat each J) {
        joining(other, kind: "RIGHT JOIN", condition: condition((From.columns, repeat (each J).columns, Other.columns)).queryFragment)
    }

    /// `FULL JOIN`: every row of both sides; both become optional in decoded rows.
    public func fullJoin<each C, each J: QuerySource, Other: Table>(
        _ other: Select<Other, Other, ()>,
        on condition: ((From.TableColumns, repeat (each J).TableColumns, Other?.TableColumns)) -> some QueryExpression<Bool>
    ) -> Select<(repeat Optional<each C>, Other?), From, (repeat each J, Other?)>
    where Columns == (repeat each C), Joins == (repeat each J) {
        joining(other, kind: "FULL JOIN", condition: condition((From.columns, repeat (each J).columns, Other?.columns)).queryFragment)
    }

    private func joining<NewColumns, NewJoins, Other: Table>(
        _ other: Select<Other, Other, ()>, kind: String, condition: QueryFragment
    ) -> Select<NewColumns, From, NewJoins> {
        var joined = Select<NewColumns, From, NewJoins>(copying: self, selection: selection + other.selection)
        var clause = QueryFragment(verbatim: kind + " ")
        clause.append(Other.tableFragment)
        clause.append(verbatim: " ON ")
        clause.append(condition)
        joined.joins.append(clause)
        joined.joins += other.joins
        joined.wheres += other.wheres
        joined.groups += other.groups
        joined.havings += other.havings
        joined.orders += other.orders
        return joined
    }
}

extension Table {
    /// `FROM "table" JOIN …`: see ``Select/join(_:on:)``.
    public static func join<Other: Table>(
        _ other: Select<Other, Other, ()>,
        on condition: (TableColumns, Other.TableColumns) -> some QueryExpression<Bool>
    ) -> Select<(Self, Other), Self, Other> {
        all.join(other) { condition($0, $1) }
    }

    /// `FROM "table" LEFT JOIN …`: see ``Select/leftJoin(_:on:)``.
    public static func leftJoin<Other: Table>(
        _ other: Select<Other, Other, ()>,
        on condition: (TableColumns, Other?.TableColumns) -> some QueryExpression<Bool>
    ) -> Select<(Self, Other?), Self, Other?> {
        all.leftJoin(other) { condition($0, $1) }
    }
}
