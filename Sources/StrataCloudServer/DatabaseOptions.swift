import ArgumentParser
import Foundation
import Logging
import PostgresNIO

/// Where the store's PostgreSQL database is: `--database-url` or `STRATA_DATABASE_URL`.
struct DatabaseOptions: ParsableArguments {
    @Option(name: .customLong("database-url"), help: "postgres://user[:password]@host[:port]/database (default: $STRATA_DATABASE_URL)")
    var databaseURL: String?

    @Option(help: "Connections the service keeps open to PostgreSQL.")
    var maximumConnections = 20

    /// The URL's parts.
    struct Target {
        var host: String
        var port: Int
        var username: String
        var password: String?
        var database: String
    }

    func target() throws -> Target {
        guard let text = databaseURL ?? ProcessInfo.processInfo.environment["STRATA_DATABASE_URL"] else {
            throw ValidationError("Give the database with --database-url or STRATA_DATABASE_URL.")
        }
        guard let url = URL(string: text), url.scheme == "postgres" || url.scheme == "postgresql", let host = url.host,
            !url.path.dropFirst().isEmpty
        else {
            throw ValidationError("\(text) is not a postgres://user@host[:port]/database URL.")
        }
        return Target(
            host: host, port: url.port ?? 5432, username: url.user ?? "postgres", password: url.password,
            database: String(url.path.dropFirst()))
    }

    /// The pool of `serve`.
    func clientConfiguration() throws -> PostgresClient.Configuration {
        let target = try target()
        var configuration = PostgresClient.Configuration(
            host: target.host, port: target.port, username: target.username, password: target.password,
            database: target.database, tls: .disable)
        configuration.options.maximumConnections = maximumConnections
        return configuration
    }

    /// The single connection of one-shot commands.
    func connectionConfiguration() throws -> PostgresConnection.Configuration {
        let target = try target()
        return PostgresConnection.Configuration(
            host: target.host, port: target.port, username: target.username, password: target.password,
            database: target.database, tls: .disable)
    }
}

/// The process's logger: `--log-level` or `STRATA_LOG_LEVEL`, to standard error.
struct LoggingOptions: ParsableArguments {
    @Option(
        name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (default: $STRATA_LOG_LEVEL or info)."
    )
    var level: String?

    func logger(_ label: String) throws -> Logger {
        let name = level ?? ProcessInfo.processInfo.environment["STRATA_LOG_LEVEL"] ?? "info"
        guard let parsed = Logger.Level(rawValue: name) else { throw ValidationError("\(name) is not a log level.") }
        var logger = Logger(label: label)
        logger.logLevel = parsed
        return logger
    }
}
