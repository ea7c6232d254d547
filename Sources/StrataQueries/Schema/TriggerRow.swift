/// The `NEW` or `OLD` row inside a trigger: its columns, typed like the table's.
///
/// ```swift
/// Player.createTemporaryTrigger(after: .insert) { row in
///     ScoreLog.insert { ScoreLog.Draft(playerID: row.new.id, score: row.new.score) }  // NEW."id", NEW."score"
/// }
/// ```
@dynamicMemberLookup
public struct TriggerRow<On: Table>: Sendable {
    let name: String

    /// A column of the row: `NEW."score"`.
    public subscript<Value>(dynamicMember keyPath: KeyPath<On.TableColumns, TableColumn<On, Value>>) -> SQLQueryExpression<Value> {
        SQLQueryExpression(QueryFragment(verbatim: name + "." + On.columns[keyPath: keyPath].name.quotedIdentifier))
    }
}

/// The rows a trigger sees: `new` after an insert or update, `old` before an update or delete.
/// SQLite rejects the trigger when its body uses a row its event does not have (`old` in an
/// insert trigger, `new` in a delete trigger).
public struct TriggerRows<On: Table>: Sendable {
    /// `NEW`: the inserted row, or the row after an update.
    public var new: TriggerRow<On> { TriggerRow(name: "NEW") }
    /// `OLD`: the deleted row, or the row before an update.
    public var old: TriggerRow<On> { TriggerRow(name: "OLD") }
}
