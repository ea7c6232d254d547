import StrataSQLite

extension Table {
    /// A trigger that runs a statement for each inserted, updated or deleted row.
    public static func createTemporaryTrigger(
        _ name: String? = nil, ifNotExists: Bool = false, after event: TriggerEvent<Self>,
        forEachRow action: (TriggerRows<Self>) -> some QueryStatement
    ) -> TemporaryTrigger<Self> {
        TemporaryTrigger(
            name: name, ifNotExists: ifNotExists, event: event.clause, condition: nil,
            steps: [action(TriggerRows())])
    }

    /// A trigger that runs a statement for each inserted, updated or deleted row matching a
    /// condition (`WHEN …`).
    public static func createTemporaryTrigger(
        _ name: String? = nil, ifNotExists: Bool = false, after event: TriggerEvent<Self>,
        forEachRow action: (TriggerRows<Self>) -> some QueryStatement,
        when condition: (TriggerRows<Self>) -> some QueryExpression<Bool>
    ) -> TemporaryTrigger<Self> {
        TemporaryTrigger(
            name: name, ifNotExists: ifNotExists, event: event.clause, condition: condition(TriggerRows()).queryFragment,
            steps: [action(TriggerRows())])
    }

    /// A trigger that runs several statements, in order, for each affected row.
    public static func createTemporaryTrigger(
        _ name: String? = nil, ifNotExists: Bool = false, after event: TriggerEvent<Self>,
        forEachRow actions: (TriggerRows<Self>) -> [any QueryStatement]
    ) -> TemporaryTrigger<Self> {
        TemporaryTrigger(
            name: name, ifNotExists: ifNotExists, event: event.clause, condition: nil,
            steps: actions(TriggerRows()))
    }

    /// A trigger that stamps a column with the current time after each update of a row:
    /// `Reminder.createTemporaryTrigger(after: .update(touch: \.updatedAt))`.
    ///
    /// The stamp is itself an `UPDATE` of the row, which does not fire the trigger again
    /// because SQLite's `recursive_triggers` is off by default.
    public static func createTemporaryTrigger(
        _ name: String? = nil, ifNotExists: Bool = false, after event: TouchEvent<Self>
    ) -> TemporaryTrigger<Self> {
        TemporaryTrigger(name: name, ifNotExists: ifNotExists, event: "UPDATE", condition: nil, actions: [touchAction(event)])
    }

    /// A stamping trigger that runs only when `condition` holds: a synced table's
    /// `updatedAt` should leave the sync engine's writes alone, or every device would stamp
    /// the rows it receives with its own clock:
    ///
    /// ```swift
    /// Reminder.createTemporaryTrigger(
    ///     after: .update(touch: \.updatedAt), when: { _ in !SyncEngine.$isSynchronizingChanges() })
    /// ```
    public static func createTemporaryTrigger(
        _ name: String? = nil, ifNotExists: Bool = false, after event: TouchEvent<Self>,
        when condition: (TriggerRows<Self>) -> some QueryExpression<Bool>
    ) -> TemporaryTrigger<Self> {
        TemporaryTrigger(
            name: name, ifNotExists: ifNotExists, event: "UPDATE", condition: condition(TriggerRows()).queryFragment,
            actions: [touchAction(event)])
    }

    private static func touchAction(_ event: TouchEvent<Self>) -> QueryFragment {
        var action = QueryFragment(verbatim: "UPDATE ")
        action.append(triggerStepTableFragment)
        action.append(verbatim: " SET " + event.column.quotedIdentifier + " = ")
        action.append(event.value)
        action.append(verbatim: " WHERE rowid = NEW.rowid")
        return action
    }
}
