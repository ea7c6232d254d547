import StrataSQLite

/// `CREATE TEMPORARY VIEW` for a `@Table` type that describes a view's rows.
///
/// ```swift
/// @Table struct RemindersListRow {
///     let remindersListID: Int
///     let title: String
///     let remindersCount: Int
/// }
/// // in Configuration.prepareDatabase, so every connection has it:
/// try RemindersListRow.createTemporaryView(
///     as: RemindersList.group(by: \.id)
///         .leftJoin(Reminder.all) { $0.id.eq($1.remindersListID) }
///         .select { ($0.id, $0.title, $1.count()) }
/// ).execute(db)
/// try RemindersListRow.where { $0.remindersCount > 0 }.fetchAll(db)
/// ```
///
/// Temporary views live on one connection; create them in `prepareDatabase`. Values bound in
/// the select are written into the view's SQL as literals, since views cannot have parameters.
public struct TemporaryView<View: Table>: QueryStatement {
    public typealias QueryValue = Void

    let select: QueryFragment
    let ifNotExists: Bool
    /// Why the select could not be built; running the statement throws it.
    let failure: StatementBuildError?

    public var statementFragment: QueryFragment {
        let columns = View.selectedColumnNames.map(\.quotedIdentifier).joined(separator: ", ")
        return QueryFragment(
            verbatim:
                "CREATE TEMPORARY VIEW " + (ifNotExists ? "IF NOT EXISTS " : "") + View.tableName.quotedIdentifier
                + " (" + columns + ") AS " + select.inlinedSQL)
    }

    public func checkedStatementFragment() throws -> QueryFragment {
        if let failure { throw failure }
        return statementFragment
    }

    /// `DROP VIEW` for this view.
    public func drop(ifExists: Bool = false) -> SQLStatement {
        SQLStatement(QueryFragment(verbatim: "DROP VIEW " + (ifExists ? "IF EXISTS " : "") + "temp." + View.tableName.quotedIdentifier))
    }
}

extension Table {
    /// `CREATE TEMPORARY VIEW "table" (columns…) AS <select>`: see ``TemporaryView``.
    ///
    /// The select must produce this type's columns in order (`TableRecord.selectedColumnNames`).
    public static func createTemporaryView<Select: QueryStatement>(
        ifNotExists: Bool = false, as select: Select
    ) -> TemporaryView<Self> {
        do {
            if let schemaName, schemaName != "temp" {
                throw DatabaseError(
                    resultCode: .misuse,
                    message: "a temporary view lives in the temp schema, not in \(schemaName.quotedIdentifier)")
            }
            return TemporaryView(select: try select.checkedStatementFragment(), ifNotExists: ifNotExists, failure: nil)
        } catch {
            let failure = StatementBuildError(
                tableName: tableName, statement: "temporary view \(tableName.quotedIdentifier)", underlying: error)
            return TemporaryView(select: select.statementFragment, ifNotExists: ifNotExists, failure: failure)
        }
    }
}
