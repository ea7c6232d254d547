import PostgresNIO

/// Which database failures are temporary: the connection or the server went away, the server
/// is starting or shutting down, or a transaction lost a race. Only these become
/// `serviceUnavailable` (retry later); anything else is a fault that a retry would repeat.
enum StoreFailure {
    /// What a client waits before retrying a transient failure.
    static let retryDelay: Duration = .seconds(1)

    static func isTransient(_ error: any Error) -> Bool {
        if error is CancellationError { return false }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .clientClosedConnection, .serverClosedConnection, .connectionError, .uncleanShutdown, .poolClosed,
            .queryCancelled:
            return true
        case .server:
            guard let state = error.serverInfo?[.sqlState] else { return false }
            // 08: connection exception; 57P01-57P03: admin/crash shutdown, cannot connect now;
            // 53: insufficient resources; 40001 and 40P01: serialization failure, deadlock;
            // 57014: a statement cancelled (`statement_timeout`, an administrator's
            // `pg_cancel_backend`); 55P03: a lock not granted in time (`lock_timeout`).
            return state.hasPrefix("08") || state.hasPrefix("57P") || state.hasPrefix("53")
                || ["40001", "40P01", "57014", "55P03"].contains(state)
        default:
            return false
        }
    }
}
