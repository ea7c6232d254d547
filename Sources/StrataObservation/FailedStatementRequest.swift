import StrataQueries
import StrataSQLite

/// The request of a wrapper whose query-builder statement could not be built: every fetch
/// throws the error, which lands in `loadError`, instead of observing SQL that reads something
/// else.
struct FailedStatementRequest<Value: Sendable>: FetchKeyRequest {
    let error: StatementBuildError

    func fetch(_ db: Database) throws -> Value { throw error }

    // Wrappers share an observation when their requests are equal: the same failure is.
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.error.description == rhs.error.description }
    func hash(into hasher: inout Hasher) { hasher.combine(error.description) }
}
