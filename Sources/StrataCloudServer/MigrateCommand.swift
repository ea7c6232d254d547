import ArgumentParser
import PostgresNIO
import StrataCloudStore

/// `strata-cloud migrate`: applies the schema migrations not applied yet, each in its own
/// transaction. Safe to run from several processes at once.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Bring the PostgreSQL schema up to date (run it as the tables' owner).")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    func run() async throws {
        let logger = try logging.logger("strata.cloud.migrate")
        let client = PostgresClient(configuration: try database.clientConfiguration(), backgroundLogger: logger)
        let applied = try await withThrowingTaskGroup(of: [Int]?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            group.addTask { try await CloudStore(client: client, logger: logger).migrate() }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let applied = result { return applied }
            }
            return []
        }
        print(applied.isEmpty ? "The schema is up to date." : "Applied migrations \(applied.map(String.init).joined(separator: ", ")).")
    }
}
