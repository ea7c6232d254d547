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

    /// The trigger's name.
    public var triggerName: String {
        if let name { return name }
        var hasher = StableHasher()
        hasher.combine(event)
        if let condition { hasher.combine(condition.inlinedSQL) }
        for action in actions { hasher.combine(action.inlinedSQL) }
        return "strata_after_\(event.split(separator: " ")[0].lowercased())_on_\(On.tableName)_\(hasher.hexDigest)"
    }

    public var statementFragment: QueryFragment {
        var sql = "CREATE TEMPORARY TRIGGER " + (ifNotExists ? "IF NOT EXISTS " : "") + triggerName.quotedSQLIdentifier
        sql += " AFTER " + event + " ON " + On.tableName.quotedSQLIdentifier + " FOR EACH ROW"
        if let condition { sql += " WHEN " + condition.inlinedSQL }
        sql += " BEGIN "
        for action in actions { sql += action.inlinedSQL + "; " }
        sql += "END"
        return QueryFragment(verbatim: sql)
    }

    /// `DROP TRIGGER` for this trigger.
    public func drop(ifExists: Bool = false) -> SQLStatement {
        SQLStatement(QueryFragment(verbatim: "DROP TRIGGER " + (ifExists ? "IF EXISTS " : "") + "temp." + triggerName.quotedSQLIdentifier))
    }
}
