import ArgumentParser
import Foundation
import Strata
import StrataTestSupport
import Testing

@testable import ScorekeeperCommands

/// `--cloud`: `scorekeeper` leaves the live cloud's client out and says where to find it;
/// `scorekeeper-live` connects through the connector its entry point installs (here, one onto
/// MockCloud that names the URL and token it was given).
@Suite("The --cloud option", .timeLimit(.minutes(1)))
struct LiveCloudOptionTests {
    private func arguments(in directory: TemporaryDirectory) -> [String] {
        ["games", "--database", directory.path("scores.sqlite"), "--cloud", "http://127.0.0.1:9", "--token", "secret"]
    }

    @Test func scorekeeperRefusesCloudAndPointsToScorekeeperLive() throws {
        let directory = try TemporaryDirectory(prefix: "scorekeeper-cloud")
        defer { directory.remove() }
        do {
            _ = try ScorekeeperCommand.parseAsRoot(arguments(in: directory))
            Issue.record("scorekeeper accepted --cloud without the live cloud's client")
        } catch {
            #expect(ScorekeeperCommand.message(for: error).contains("run scorekeeper-live with the same arguments"))
        }
        let help = ScorekeeperCommand.helpMessage(for: Games.self, columns: 200)
        #expect(help.contains("Needs scorekeeper-live"))
    }

    @Test func scorekeeperLiveConnectsThroughItsConnector() throws {
        let directory = try TemporaryDirectory(prefix: "scorekeeper-cloud")
        defer { directory.remove() }
        let connector: LiveCloudConnector = { url, token in
            MockCloud(identifier: "\(url.absoluteString) \(token)").container(user: "blob")
        }
        try ScorekeeperCommand.$liveCloud.withValue(connector) {
            let command = try ScorekeeperCommand.parseAsRoot(arguments(in: directory))
            let subcommand = try #require(command as? any ScorekeeperSubcommand)
            let container = try #require(subcommand.options.cloudContainer())
            #expect(container.identifier == "http://127.0.0.1:9 secret")
            #expect(ScorekeeperCommand.helpMessage(columns: 200).contains("USAGE: scorekeeper-live"))
            #expect(!ScorekeeperCommand.helpMessage(for: Games.self, columns: 200).contains("Needs scorekeeper-live"))
        }
        // Without --cloud, no container, whatever the executable.
        try ScorekeeperCommand.$liveCloud.withValue(connector) {
            let command = try ScorekeeperCommand.parseAsRoot(["games", "--database", directory.path("scores.sqlite")])
            let subcommand = try #require(command as? any ScorekeeperSubcommand)
            #expect(subcommand.options.cloudContainer() == nil)
        }
    }
}
