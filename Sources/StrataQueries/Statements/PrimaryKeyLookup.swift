import StrataSQLite

/// The condition of `find(id)` with a key value: `"table"."id" = ?`, kept as the key and the
/// table until its SQL is needed.
@usableFromInline
struct PrimaryKeyLookup: Sendable {
    @usableFromInline var key: DatabaseValue
    @usableFromInline var table: any PrimaryKeyedTable.Type

    @usableFromInline
    init(key: DatabaseValue, table: any PrimaryKeyedTable.Type) {
        self.key = key
        self.table = table
    }

    /// The condition's SQL, exactly what `find` with an expression writes.
    var condition: QueryFragment { Self.condition(table, key: key) }

    private static func condition<T: PrimaryKeyedTable>(_ table: T.Type, key: DatabaseValue) -> QueryFragment {
        T.columns.primaryKey.eq(SQLQueryExpression<T.TableColumns.PrimaryKey>(QueryFragment(binding: key))).queryFragment
    }
}
