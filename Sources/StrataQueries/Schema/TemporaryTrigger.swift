import StrataSQLite

/// `CREATE TEMPORARY TRIGGER`: statements SQLite runs after each inserted, updated or deleted
/// row of a table.
///
/// ```swift
/// try Reminder.createTemporaryTrigger(after: .update(touch: \.updatedAt)).execute(db)
/// try Player.createTemporaryTrigger(after: .delete, forEachRow: { row in
///     Tombstone.insert { Tombstone.Draft(playerID: row.old.id) }
/// }).execute(db)
/// ```
///
/// Temporary triggers live on one connection: create them in `prepareDatabase` (on a pool,
/// the writer is the connection that matters). Values bound in the body or condition are
/// written as literals, since trigger bodies cannot have parameters. Without a name, the
/// trigger is named after its table, event and a hash of its SQL, so re-creating the same
/// trigger with `ifNotExists` is harmless.
public struct TemporaryTrigger<On: Table>: QueryStatement {
    public typealias QueryValue = Void

    let name: String?
    let ifNotExists: Bool
    let event: String
    let condition: QueryFragment?
    let actions: [QueryFragment]
    /// Why a step of the body could not be built; running the trigger throws it.
    private(set) var failure: StatementBuildError?

    init(name: String?, ifNotExists: Bool, event: String, condition: QueryFragment?, actions: [QueryFragment]) {
        self.name = name
        self.ifNotExists = ifNotExists
        self.event = event
        self.condition = condition
        self.actions = actions
        failure = nil
    }

    /// A trigger whose body is these statements, each checked and written as a trigger step.
    /// A statement that fails to build makes the trigger's ``checkedStatementFragment()``
    /// throw, so a broken body (such as a delete of a record that failed to encode) never
    /// becomes a trigger that silently does something else.
    init(name: String?, ifNotExists: Bool, event: String, condition: QueryFragment?, steps: [any QueryStatement]) {
        var actions: [QueryFragment] = []
        var failure: StatementBuildError?
        for (index, step) in steps.enumerated() {
            do {
                actions.append(try step.checkedTriggerBodyFragment())
            } catch {
                actions.append(step.statementFragment)
                if failure == nil {
                    failure = StatementBuildError(
                        tableName: On.tableName,
                        statement: "temporary trigger after \(event) on \(On.quotedTableName) (step \(index + 1) of its body)",
                        underlying: error)
                }
            }
        }
        self.init(name: name, ifNotExists: ifNotExists, event: event, condition: condition, actions: actions)
        self.failure = failure
    }

    /// The trigger's name.
    public var triggerName: String {
        if let name { return name }
        var hasher = StableHasher()
        hasher.combine(event)
        // The same body on a table of another schema is another trigger.
        if On.schemaName != nil { hasher.combine(On.quotedTableName) }
        if let condition { hasher.combine(condition.inlinedSQL) }
        for action in actions { hasher.combine(action.inlinedSQL) }
        return "strata_after_\(event.split(separator: " ")[0].lowercased())_on_\(On.tableName)_\(hasher.hexDigest)"
    }

    public var statementFragment: QueryFragment {
        var sql = "CREATE TEMPORARY TRIGGER " + (ifNotExists ? "IF NOT EXISTS " : "") + triggerName.quotedIdentifier
        sql += " AFTER " + event + " ON " + On.quotedTableName + " FOR EACH ROW"
        if let condition { sql += " WHEN " + condition.inlinedSQL }
        sql += " BEGIN "
        for action in actions { sql += action.inlinedSQL + "; " }
        sql += "END"
        return QueryFragment(verbatim: sql)
    }

    public func checkedStatementFragment() throws -> QueryFragment {
        if let failure { throw failure }
        return statementFragment
    }

    /// `DROP TRIGGER` for this trigger.
    public func drop(ifExists: Bool = false) -> SQLStatement {
        SQLStatement(QueryFragment(verbatim: "DROP TRIGGER " + (ifExists ? "IF EXISTS " : "") + "temp." + triggerName.quotedIdentifier))
    }
}
