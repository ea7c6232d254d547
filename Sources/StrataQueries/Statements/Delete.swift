import StrataSQLite

/// A `DELETE` statement: every row of a table, or the rows a filter keeps.
///
/// ```swift
/// try Player.delete().execute(db)                                  // every row
/// try Player.where { $0.score < 5 }.delete().execute(db)
/// try Player.find(id).delete().execute(db)
/// try Player.delete(player).execute(db)                            // by primary key
/// let removed = try Player.delete().where { $0.gameID.eq(2) }.returning { $0 }.fetchAll(db)
/// ```
///
/// - `From`: the table deleted from.
/// - `Returning`: what a row of `RETURNING` decodes to; `()` without `returning(_:)`.
public struct Delete<From: Table, Returning>: QueryStatement {
    public typealias QueryValue = Returning

    var wheres: [QueryFragment] = []
    var returning: [QueryFragment] = []
    var failure: (any Error)?

    init(wheres: [QueryFragment] = [], failure: (any Error)? = nil) {
        self.wheres = wheres
        self.failure = failure
    }

    init<Other>(copying other: Delete<From, Other>, returning: [QueryFragment]) {
        wheres = other.wheres
        failure = other.failure
        self.returning = returning
    }

    public var statementFragment: QueryFragment {
        fragment(naming: From.tableFragment)
    }

    public func checkedStatementFragment() throws -> QueryFragment {
        if let failure { throw failure }
        return statementFragment
    }

    /// The statement, with `table` for its table's name.
    private func fragment(naming table: QueryFragment) -> QueryFragment {
        var fragment = QueryFragment(verbatim: "DELETE FROM ")
        fragment.append(table)
        if !wheres.isEmpty {
            fragment.append(verbatim: " WHERE ")
            fragment.append(conjunction(wheres))
        }
        fragment.append(returningClause(returning))
        return fragment
    }
}

extension Delete: Sendable {}

extension Delete: TriggerStepStatement {
    func checkedTriggerStepFragment() throws -> QueryFragment {
        if let failure { throw failure }
        return fragment(naming: From.triggerStepTableFragment)
    }
}

extension Delete {
    /// Adds a condition: `WHERE …`. Several conditions are joined with AND.
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
}

extension Table {
    /// `DELETE FROM "table"`: every row, unless narrowed with `where`.
    public static func delete() -> Delete<Self, ()> {
        Delete()
    }
}

extension PrimaryKeyedTable {
    /// `DELETE FROM "table" WHERE "table"."id" = ?`: the row with the record's primary key.
    public static func delete(_ record: Self) -> Delete<Self, ()> {
        do {
            let values = try encodedColumnValues { try record.encodeColumns(to: &$0) }
            return Delete(wheres: [try primaryKeyCondition(Self.self, values: values)])
        } catch {
            return Delete(wheres: [unencodableRecordCondition(Self.self, error)], failure: error)
        }
    }
}
