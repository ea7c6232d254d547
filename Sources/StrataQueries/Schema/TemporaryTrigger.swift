import Foundation
import StrataSQLite

/// What fires a trigger: `.insert`, `.update`, `.update { ($0.title, $0.score) }` (only when
/// those columns are assigned) or `.delete`.
public struct TriggerEvent<On: Table>: Sendable {
    let keyword: String
    let columns: [String]

    /// After a row is inserted.
    public static var insert: Self { Self(keyword: "INSERT", columns: []) }
    /// After a row is updated.
    public static var update: Self { Self(keyword: "UPDATE", columns: []) }
    /// After a row is deleted.
    public static var delete: Self { Self(keyword: "DELETE", columns: []) }

    /// After an `UPDATE` that assigns one of the columns: `UPDATE OF "title", "score"`.
    public static func update<each Column>(
        of columns: (On.TableColumns) -> (repeat TableColumn<On, each Column>)
    ) -> Self {
        var names: [String] = []
        for column in repeat each columns(On.columns) {
            names.append(column.name)
        }
        return Self(keyword: "UPDATE", columns: names)
    }

    var clause: String {
        columns.isEmpty ? keyword : keyword + " OF " + columns.map(\.quotedSQLIdentifier).joined(separator: ", ")
    }
}

/// A date column a trigger can set to the current time: ``TouchEvent``.
public protocol CurrentTimestampRepresentable {
    /// SQL that evaluates to the current time in this type's stored form.
    static var currentTimestampSQL: QueryFragment { get }
}

extension Date: CurrentTimestampRepresentable {
    /// UTC `YYYY-MM-DD HH:MM:SS.SSS`, the form Strata stores dates in.
    public static var currentTimestampSQL: QueryFragment { "strftime('%Y-%m-%d %H:%M:%f', 'now')" }
}

extension Date.ISO8601Representation: CurrentTimestampRepresentable {
    public static var currentTimestampSQL: QueryFragment { "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')" }
}

extension Date.UnixTimeRepresentation: CurrentTimestampRepresentable {
    // unixepoch('subsec') needs SQLite 3.42; the Julian-day arithmetic works everywhere.
    public static var currentTimestampSQL: QueryFragment { "((julianday('now') - 2440587.5) * 86400.0)" }
}

extension Optional: CurrentTimestampRepresentable where Wrapped: CurrentTimestampRepresentable {
    public static var currentTimestampSQL: QueryFragment { Wrapped.currentTimestampSQL }
}

/// A trigger that stamps a column after every update of a row: `.update(touch: \.updatedAt)`.
public struct TouchEvent<On: Table>: Sendable {
    let column: String
    let value: QueryFragment

    /// After an update, sets the column to the current time.
    public static func update<Value: CurrentTimestampRepresentable>(
        touch column: KeyPath<On.TableColumns, TableColumn<On, Value>>
    ) -> Self {
        Self(column: On.columns[keyPath: column].name, value: Value.currentTimestampSQL)
    }

    /// After an update, sets the column to an expression, for example a `@DatabaseFunction`
    /// that reads an injected clock: `.update(touch: \.updatedAt, to: $now())`.
    public static func update<Value>(
        touch column: KeyPath<On.TableColumns, TableColumn<On, Value>>, to value: some QueryExpression<Value>
    ) -> Self {
        Self(column: On.columns[keyPath: column].name, value: value.queryFragment)
    }
}

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

extension Table {
    /// A trigger that runs a statement for each inserted, updated or deleted row.
    public static func createTemporaryTrigger(
        _ name: String? = nil, ifNotExists: Bool = false, after event: TriggerEvent<Self>,
        forEachRow action: (TriggerRows<Self>) -> some QueryStatement
    ) -> TemporaryTrigger<Self> {
        TemporaryTrigger(
            name: name, ifNotExists: ifNotExists, event: event.clause, condition: nil,
            actions: [action(TriggerRows()).statementFragment])
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
            actions: [action(TriggerRows()).statementFragment])
    }

    /// A trigger that runs several statements, in order, for each affected row.
    public static func createTemporaryTrigger(
        _ name: String? = nil, ifNotExists: Bool = false, after event: TriggerEvent<Self>,
        forEachRow actions: (TriggerRows<Self>) -> [any QueryStatement]
    ) -> TemporaryTrigger<Self> {
        TemporaryTrigger(
            name: name, ifNotExists: ifNotExists, event: event.clause, condition: nil,
            actions: actions(TriggerRows()).map(\.statementFragment))
    }

    /// A trigger that stamps a column with the current time after each update of a row:
    /// `Reminder.createTemporaryTrigger(after: .update(touch: \.updatedAt))`.
    ///
    /// The stamp is itself an `UPDATE` of the row, which does not fire the trigger again
    /// because SQLite's `recursive_triggers` is off by default.
    public static func createTemporaryTrigger(
        _ name: String? = nil, ifNotExists: Bool = false, after event: TouchEvent<Self>
    ) -> TemporaryTrigger<Self> {
        var action = QueryFragment(verbatim: "UPDATE " + tableName.quotedSQLIdentifier + " SET " + event.column.quotedSQLIdentifier + " = ")
        action.append(event.value)
        action.append(verbatim: " WHERE rowid = NEW.rowid")
        return TemporaryTrigger(name: name, ifNotExists: ifNotExists, event: "UPDATE", condition: nil, actions: [action])
    }
}

/// FNV-1a, 64-bit: a name that is the same in every process (Swift's `Hasher` is seeded per
/// process).
struct StableHasher {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func combine(_ text: String) {
        for byte in text.utf8 {
            state ^= UInt64(byte)
            state = state &* 0x0000_0100_0000_01b3
        }
        state ^= 0xff
    }

    var hexDigest: String {
        let hex = String(state, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
