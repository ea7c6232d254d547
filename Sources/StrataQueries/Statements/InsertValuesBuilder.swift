/// Collects the rows of an `INSERT`: one value per line, arrays of them, and `if` / `for`.
///
/// ```swift
/// Player.insert {
///     Player(id: 1, gameID: 1, name: "Ann", score: 12)
///     Player(id: 2, gameID: 1, name: "Bob", score: 7)
///     if includeCid { Player(id: 3, gameID: 2, name: "Cid", score: 3) }
/// }
/// Player.insert { newPlayers }                          // an array
/// Player.insert { ($0.name, $0.gameID) } values: {      // tuples, for a column list
///     ("Ann", 1)
///     ("Bob", 1)
/// }
/// ```
@resultBuilder
public enum InsertValuesBuilder<Value> {
    /// One row.
    public static func buildExpression(_ value: Value) -> [Value] { [value] }

    /// Several rows at once; an empty array adds none.
    public static func buildExpression(_ values: [Value]) -> [Value] { values }

    /// The rows of every line, in order.
    public static func buildBlock(_ components: [Value]...) -> [Value] {
        components.flatMap { $0 }
    }

    /// The rows of every iteration of a `for` loop.
    public static func buildArray(_ components: [[Value]]) -> [Value] {
        components.flatMap { $0 }
    }

    /// The rows of an `if` without `else`, or none.
    public static func buildOptional(_ component: [Value]?) -> [Value] { component ?? [] }

    /// The rows of the taken branch of an `if`/`else` or `switch`.
    public static func buildEither(first component: [Value]) -> [Value] { component }

    /// The rows of the taken branch of an `if`/`else` or `switch`.
    public static func buildEither(second component: [Value]) -> [Value] { component }

    /// The rows of an `if #available` branch.
    public static func buildLimitedAvailability(_ component: [Value]) -> [Value] { component }
}
