import Foundation
import Strata

/// Makes the live cloud's container for `--cloud URL` and its bearer token.
public typealias LiveCloudConnector = @Sendable (_ url: URL, _ token: String) -> any CloudContainer

extension ScorekeeperCommand {
    /// What `--cloud` connects through: set by `scorekeeper-live`, which links StrataCloudClient
    /// (AsyncHTTPClient, NIO, BoringSSL); nil in `scorekeeper`, which leaves networking out so
    /// that a newcomer's first `swift run scorekeeper` builds in minutes.
    @TaskLocal public static var liveCloud: LiveCloudConnector?

    /// Runs the command line with `--cloud` connecting through `connector`:
    /// `scorekeeper-live`'s entry point.
    public static func main(liveCloud connector: @escaping LiveCloudConnector) async {
        await $liveCloud.withValue(connector) { await main() }
    }

    /// The executable's name, as usage lines and messages print it.
    static var executableName: String { liveCloud == nil ? "scorekeeper" : "scorekeeper-live" }
}
