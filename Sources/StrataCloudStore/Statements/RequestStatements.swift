import Logging
import PostgresNIO

extension PreparedStatements {
    /// Makes the transaction's role the request role and its user `user`, until it ends
    /// (setting `role` locally is what `SET LOCAL ROLE` does).
    struct ActAs: PostgresPreparedStatement {
        static let name = "strata_act_as"
        static let sql = "SELECT set_config('role', $1, true), set_config('strata.user', $2, true)"
        typealias Row = (String, String)

        var role: String
        var user: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(role)
            bindings.append(user)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}

extension PostgresConnection {
    /// Runs a prepared statement that returns nothing the caller needs, reading its rows to
    /// the end.
    func run<Statement: PostgresPreparedStatement>(_ statement: Statement, logger: Logger) async throws {
        for try await _ in try await execute(statement, logger: logger) {}
    }

    /// Runs a statement that returns nothing the caller needs, reading its rows to the end.
    ///
    /// PostgreSQL reports a failure during a statement that returns rows (`SELECT f(…)`, a
    /// lock taken with `SELECT … FOR UPDATE`) after the statement's description, and
    /// PostgresNIO hands it over with the rows: a sequence left unread drops it. The
    /// transaction is aborted all the same, so the next statement fails with `25P02` (which
    /// hides the cause, a deadlock or a timeout that a retry would get past), or, after the
    /// last one, `COMMIT` answers with a rollback and no error. Every statement whose rows are
    /// not read goes through here.
    func perform(_ query: PostgresQuery, logger: Logger) async throws {
        for try await _ in try await self.query(query, logger: logger) {}
    }

    /// The rows of a prepared statement, decoded.
    func rows<Statement: PostgresPreparedStatement>(of statement: Statement, logger: Logger) async throws -> [Statement.Row] {
        var rows: [Statement.Row] = []
        for try await row in try await execute(statement, logger: logger) { rows.append(row) }
        return rows
    }
}
