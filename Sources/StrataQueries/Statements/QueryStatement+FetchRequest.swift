import StrataSQLite

extension QueryStatement {
    /// The checked statement a fetch request observes, or why it cannot be built: the request
    /// then fails with this error instead of observing SQL that reads something else.
    package var fetchRequestFragment: Result<QueryFragment, StatementBuildError> {
        do {
            return .success(try checkedStatementFragment())
        } catch {
            return .failure(StatementBuildError(tableName: nil, statement: "fetch request of \(Self.self)", underlying: error))
        }
    }
}
