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
    public static func buildExpression(_ value: Value) -> [Value] { [value] }

    public static func buildExpression(_ values: [Value]) -> [Value] { values }

    public static func buildBlock(_ components: [Value]...) -> [Value] {
        components.flatMap { $0 }
    }

    public static func buildArray(_ components: [[Value]]) -> [Value] {
        components.flatMap { $0 }
    }

    public static func buildOptional(_ component: [Value]?) -> [Value] { component ?? [] }

    public static func buildEither(first component: [Value]) -> [Value] { component }

    public static func buildEither(second component: [Value]) -> [Value] { component }

    public static func buildLimitedAvailability(_ component: [Value]) -> [Value] { component }
}
