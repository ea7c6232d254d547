/// Full-text search on an FTS5 virtual table declared with `@Table`:
///
/// ```swift
/// // CREATE VIRTUAL TABLE reminderTexts USING fts5(title, notes)
/// @Table struct ReminderText { let title: String; let notes: String }
/// try ReminderText.where { $0.match("milk OR bread") }.order { $0.rank }.fetchAll(db)
/// ```
extension TableDefinition {
    /// `"table" MATCH query`: rows matching an FTS5 query over every column.
    public func match(_ query: some QueryExpression<String>) -> SQLQueryExpression<Bool> {
        SQLQueryExpression("(" + QueryFragment(quoting: QueryValue.tableName) + " MATCH " + query.queryFragment + ")")
    }

    /// FTS5's `rank` of the current match: order by it for best matches first.
    public var rank: SQLQueryExpression<Double> {
        SQLQueryExpression(QueryFragment(quoting: QueryValue.tableName) + QueryFragment(verbatim: ".\"rank\""))
    }

    /// `highlight("table", column, open, close)`: the column's text with each match wrapped.
    public func highlight<Value>(
        _ column: KeyPath<Self, TableColumn<QueryValue, Value>>, open: String, close: String
    ) -> SQLQueryExpression<String> {
        let index = Self.allColumns.firstIndex { $0.name == self[keyPath: column].name } ?? 0
        return SQLQueryExpression(
            "highlight(" + QueryFragment(quoting: QueryValue.tableName) + ", " + QueryFragment(verbatim: String(index)) + ", "
                + QueryFragment(binding: .text(open)) + ", " + QueryFragment(binding: .text(close)) + ")")
    }
}

extension TableColumn where Value == String {
    /// `"table"."column" MATCH query`: rows whose column matches an FTS5 query.
    public func match(_ query: some QueryExpression<String>) -> SQLQueryExpression<Bool> {
        SQLQueryExpression("(" + queryFragment + " MATCH " + query.queryFragment + ")")
    }
}
