import ArgumentParser
import PostgresNIO
import StrataCloudStore

/// `strata-cloud migrate`: applies the schema migrations not applied yet, each in its own
/// transaction. Safe to run from several processes at once.
///
/// It works over one connection that it closes itself, then returns, and the process exits: a
/// connection pool run in a task group had to wind down on cancellation first, which is where
/// the command could stay alive after its work was done.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Bring the PostgreSQL schema up to date (run it as the tables' owner).")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = try logging.logger("strata.cloud.migrate")
        let connection = try await PostgresConnection.connect(
            configuration: try database.connectionConfiguration(), id: 1, logger: logger)
        let applied: [Int]
        do {
            applied = try await CloudStore.migrate(on: connection, logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
        try await connection.close()
        print(applied.isEmpty ? "The schema is up to date." : "Applied migrations \(applied.map(String.init).joined(separator: ", ")).")
    }
}
