/// A statement the builder could not write: the body of a temporary trigger or view, or the
/// statement of a fetch request, failed to build (a record whose encoding threw, an update
/// without assignments, a select that cannot become a write). Nothing was run.
///
/// ```swift
/// do {
///     try Player.createTemporaryTrigger(after: .insert) { _ in Log.delete(unencodable) }.execute(db)
/// } catch let error as StatementBuildError {
///     print(error.tableName, error.statement, error.underlying)
/// }
/// ```
public struct StatementBuildError: Error, CustomStringConvertible {
    /// The table (or view) the failed statement was built for, unquoted; nil for a fetch
    /// request, which ``statement`` names by the statement's type.
    public let tableName: String?
    /// What was being built, for example `temporary trigger after DELETE on "players"`.
    public let statement: String
    /// Why it failed: the error the part that failed threw.
    public let underlying: any Error

    public init(tableName: String?, statement: String, underlying: any Error) {
        self.tableName = tableName
        self.statement = statement
        self.underlying = underlying
    }

    public var description: String {
        "cannot build the \(statement): \(underlying)"
    }
}
