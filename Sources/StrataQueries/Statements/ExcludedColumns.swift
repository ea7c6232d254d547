/// The columns of the row an upsert proposed and SQLite set aside because it conflicted: the
/// `excluded` row of `ON CONFLICT … DO UPDATE`. Its columns are written `"excluded"."column"`.
///
/// ```swift
/// Player.insert { player }
///     .onConflict { $0.id } doUpdate: { row, excluded in
///         row.score += excluded.score          // "score" = ("players"."score" + "excluded"."score")
///     }
/// ```
@dynamicMemberLookup
public struct ExcludedColumns<Root: Table>: Sendable {
    init() {}

    /// A column of the proposed row.
    public subscript<Value>(
        dynamicMember keyPath: KeyPath<Root.TableColumns, TableColumn<Root, Value>>
    ) -> SQLQueryExpression<Value> {
        SQLQueryExpression(
            QueryFragment(verbatim: "excluded".quotedIdentifier + "." + Root.columns[keyPath: keyPath].name.quotedIdentifier))
    }
}
