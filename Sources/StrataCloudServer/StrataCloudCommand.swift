import ArgumentParser

/// `strata-cloud`: the live cloud's service. `migrate` brings the PostgreSQL schema up to date,
/// `serve` runs the HTTP service, `token` issues a development token for a user.
@main
struct StrataCloudCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-cloud",
        abstract: "Strata's sync service: the cloud's semantics in PostgreSQL, over HTTP.",
        subcommands: [MigrateCommand.self, ServeCommand.self, TokenCommand.self])
}
