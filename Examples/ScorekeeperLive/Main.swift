import ScorekeeperCommands
import StrataCloudClient

/// The `scorekeeper-live` executable: `scorekeeper`'s commands, with `--cloud URL` syncing the
/// `--database` file through a strata-cloud service. It links StrataCloudClient (and with it
/// AsyncHTTPClient, NIO and BoringSSL), which `scorekeeper` leaves out so that it builds fast.
@main
enum Main {
    static func main() async {
        await ScorekeeperCommand.main(liveCloud: { url, token in
            CloudServiceContainer(baseURL: url, token: token, identifier: "strata.scorekeeper")
        })
    }
}
