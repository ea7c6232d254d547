import StrataSQLite

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
