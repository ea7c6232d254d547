import StrataSQLite

/// An `UPDATE` statement: assignments written as Swift (see ``Updates``), applied to every row
/// or to the rows a filter keeps.
///
/// ```swift
/// try Player.update { $0.score += 1 }.execute(db)                          // every row
/// try Player.find(id).update { $0.score = 0; $0.name = "x" }.execute(db)
/// try Player.where { $0.gameID.eq(1) }.update { $0.nickname = nil }.execute(db)
/// try Player.update(player).execute(db)        // every non-key column, by primary key
/// let scores = try Player.update { $0.score *= 2 }.returning(\.score).fetchAll(db)
/// ```
///
/// An update without assignments cannot be written in SQL: running it throws a
/// `DatabaseError` with result code `.misuse` and executes nothing.
///
/// - `Root`: the table written.
/// - `Returning`: what a row of `RETURNING` decodes to; `()` without `returning(_:)`.
public struct Update<Root: Table, Returning>: QueryStatement {
    public typealias QueryValue = Returning

    var resolution: ConflictResolution?
    var updates: Updates<Root>
    var wheres: [QueryFragment] = []
    var returning: [QueryFragment] = []
    var failure: (any Error)?

    init(resolution: ConflictResolution?, updates: Updates<Root>, wheres: [QueryFragment] = [], failure: (any Error)? = nil) {
        self.resolution = resolution
        self.updates = updates
        self.wheres = wheres
        self.failure = failure
    }

    init<Other>(copying other: Update<Root, Other>, returning: [QueryFragment]) {
        resolution = other.resolution
        updates = other.updates
        wheres = other.wheres
        failure = other.failure
        self.returning = returning
    }

    public var statementFragment: QueryFragment {
        fragment(naming: Root.tableFragment)
    }

    public func checkedStatementFragment() throws -> QueryFragment {
        try checkedFragment(naming: Root.tableFragment)
    }

    /// The statement, with `table` for its table's name.
    private func fragment(naming table: QueryFragment) -> QueryFragment {
        var fragment = QueryFragment(verbatim: "UPDATE" + conflictResolutionClause(resolution) + " ")
        fragment.append(table)
        fragment.append(verbatim: " SET ")
        fragment.append(updates.setList)
        if !wheres.isEmpty {
            fragment.append(verbatim: " WHERE ")
            fragment.append(conjunction(wheres))
        }
        fragment.append(returningClause(returning))
        return fragment
    }

    private func checkedFragment(naming table: QueryFragment) throws -> QueryFragment {
        if let failure { throw failure }
        let statement = fragment(naming: table)
        guard !updates.isEmpty else {
            throw DatabaseError(
                resultCode: .misuse,
                message: "UPDATE \(Root.quotedTableName) has no assignments",
                sql: statement.sql,
                arguments: statement.statementArguments)
        }
        return statement
    }
}

extension Update: Sendable {}

extension Update: TriggerStepStatement {
    func checkedTriggerStepFragment() throws -> QueryFragment {
        try checkedFragment(naming: Root.triggerStepTableFragment)
    }
}

extension Update {
    /// Adds a condition: `WHERE …`. Several conditions are joined with AND.
    ///
    /// ```swift
    /// Player.update { $0.score = 0 }.where { $0.gameID.eq(2) }
    /// ```
    public func `where`(_ predicate: (Root.TableColumns) -> some QueryExpression<Bool>) -> Self {
        var copy = self
        copy.wheres.append(predicate(Root.columns).queryFragment)
        return copy
    }

    /// Adds a condition on an optional boolean (NULL is false): `WHERE …`.
    public func `where`(_ predicate: (Root.TableColumns) -> some QueryExpression<Bool?>) -> Self {
        var copy = self
        copy.wheres.append(predicate(Root.columns).queryFragment)
        return copy
    }
}

extension Table {
    /// `UPDATE "table" SET …`: every row of the table, with the assignments the closure makes.
    ///
    /// ```swift
    /// Player.update { $0.score += 1 }
    /// Player.update(or: .ignore) { $0.name = "Ann" }
    /// ```
    ///
    /// - Parameters:
    ///   - resolution: What to do when a row violates a constraint: `UPDATE OR IGNORE`, …;
    ///     nil for SQLite's default (abort).
    ///   - assignments: Assigns columns of ``Updates``.
    public static func update(
        or resolution: ConflictResolution? = nil,
        set assignments: (inout Updates<Self>) -> Void
    ) -> Update<Self, ()> {
        var updates = Updates<Self>()
        assignments(&updates)
        return Update(resolution: resolution, updates: updates)
    }
}

extension PrimaryKeyedTable {
    /// `UPDATE "table" SET (every non-key column) = ? … WHERE "table"."id" = ?`: writes a record
    /// over the row with its primary key. Generated columns are not written.
    ///
    /// ```swift
    /// player.score += 1
    /// try Player.update(player).execute(db)
    /// ```
    ///
    /// Updating a row that does not exist changes nothing and is no error
    /// (`db.changesCount` is 0).
    public static func update(or resolution: ConflictResolution? = nil, _ record: Self) -> Update<Self, ()> {
        do {
            let values = try encodedColumnValues { try record.encodeColumns(to: &$0) }
            let key = columns.primaryKey.name
            var updates = Updates<Self>()
            for (name, value) in zip(columnNames, values) where name != key {
                updates.assign(name, QueryFragment(binding: value))
            }
            let condition = try primaryKeyCondition(Self.self, values: values)
            if updates.isEmpty, let position = columnNames.firstIndex(of: key) {
                // A table of key columns only has nothing else to set: setting the key to itself
                // keeps the statement valid.
                updates.assign(key, QueryFragment(binding: values[position]))
            }
            return Update(resolution: resolution, updates: updates, wheres: [condition])
        } catch {
            return Update(
                resolution: resolution, updates: Updates(), wheres: [unencodableRecordCondition(Self.self, error)], failure: error)
        }
    }
}
