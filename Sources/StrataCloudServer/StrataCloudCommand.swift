import ArgumentParser

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `strata-cloud`: the live cloud's service. `migrate` brings the PostgreSQL schema up to date,
/// `serve` runs the HTTP service, `token` issues a development token for a user.
@main
struct StrataCloudCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-cloud",
        abstract: "Strata's sync service: the cloud's semantics in PostgreSQL, over HTTP.",
        subcommands: [MigrateCommand.self, ServeCommand.self, TokenCommand.self])

    /// Restores the default handling of SIGTERM and SIGINT before anything runs, then runs the
    /// command. A process inherits ignored signals and its signal mask across `exec`: started by
    /// a parent that ignores or blocks SIGTERM (a service manager, a test runner), it would
    /// otherwise ignore SIGTERM too. `serve` installs its own handlers afterwards.
    static func main() async {
        for signal in [SIGTERM, SIGINT] {
            _ = resetSignal(signal)
        }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        sigaddset(&unblocked, SIGTERM)
        sigaddset(&unblocked, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

/// Sets `signal`'s disposition back to the default.
private func resetSignal(_ number: Int32) -> Bool {
    var action = sigaction()
    #if canImport(Glibc)
        action.__sigaction_handler.sa_handler = SIG_DFL
    #else
        action.__sigaction_u.__sa_handler = SIG_DFL
    #endif
    sigemptyset(&action.sa_mask)
    return sigaction(number, &action, nil) == 0
}
