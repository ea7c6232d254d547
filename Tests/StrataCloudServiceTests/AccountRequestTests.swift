import Foundation
import StrataCloudClient
import StrataCloudWire
import StrataSync
import StrataSyncTestSupport
import Synchronization
import Testing

/// An engine asks for the account before every send and fetch: through the service, that is
/// one request (`CloudContainer.account()`), not one for the status and one for the user
/// (issue #27: two of the push path's eight requests).
@Suite(.timeLimit(.minutes(2)))
struct AccountRequestTests {
    /// How many `GET /v1/account` the service answered, from its metrics.
    static func accountRequests(_ harness: ServiceHarness) async throws -> Int {
        let text = String(decoding: try await harness.send(.GET, CloudRoute.metrics).body, as: UTF8.self)
        return text.split(separator: "\n")
            .filter { $0.hasPrefix("strata_cloud_requests_total{") && $0.contains("route=\"\(CloudRoute.account)\"") }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
            .reduce(0, +)
    }

    @Test func theAccountAndItsUserComeInOneRequest() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let container = try await harness.container(user: "alice")
            let before = try await Self.accountRequests(harness)
            #expect(try await container.account() == CloudAccount(status: .available, user: "alice"))
            #expect(try await Self.accountRequests(harness) == before + 1)
            #expect(try await harness.container(token: "not a token").account() == CloudAccount(status: .noAccount, user: nil))
        }
    }

    /// An engine asks before every send and fetch; the container asks the service once per
    /// token (issue #27: a request on each side of a push).
    @Test func anEngineAsksOncePerToken() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let device = try await SyncTestDevice("a", container: harness.container(user: "alice"))
            try await device.execute("INSERT INTO games (id, title) VALUES ('g', 'Go')")
            try await device.engine.sendChanges()
            try await device.engine.fetchChanges()
            let before = try await Self.accountRequests(harness)
            for round in 0..<3 {
                try await device.execute("UPDATE games SET title = 'Chess \(round)'")
                try await device.engine.sendChanges()
                try await device.engine.fetchChanges()
            }
            #expect(try await Self.accountRequests(harness) == before)
        }
    }

    /// End-to-end encryption's keys come without asking again: the first upload of an account
    /// (which makes the zone's key and the user's identity) and a new device's first download
    /// (which finds the key in the key zone) each ask the service once, as any send or fetch.
    /// Each of the three devices has a token of its own.
    @Test(arguments: [SyncEncryption.endToEnd, .disabled])
    func aFirstSyncAsksOncePerDevice(encryption: SyncEncryption) async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            var before = try await Self.accountRequests(harness)
            let phone = try await SyncTestDevice("phone", container: try await harness.container(user: "alice"), encryption: encryption)
            try await phone.execute("INSERT INTO games (id, title) VALUES ('g', 'Go')")
            try await phone.engine.sendChanges()
            try await phone.engine.fetchChanges()
            #expect(try await Self.accountRequests(harness) == before + 1, "first upload")
            before = try await Self.accountRequests(harness)
            let laptop = try await SyncTestDevice("laptop", container: try await harness.container(user: "alice"), encryption: encryption)
            try await laptop.engine.fetchChanges()
            try await laptop.execute("UPDATE games SET title = 'Chess'")
            try await laptop.engine.sendChanges()
            #expect(try await Self.accountRequests(harness) == before + 1, "first download")
            #expect(try await laptop.rows() == ["game g 'Chess' NULL"])
        }
    }

    /// Another token (a refresh, another user) is asked about: the container follows a switch
    /// at once.
    @Test func aNewTokenIsAskedAbout() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let tokens = [try await harness.token(user: "alice"), try await harness.token(user: "bob")]
            let current = Mutex(0)
            let container = CloudServiceContainer(
                baseURL: harness.baseURL, token: { tokens[current.withLock { $0 }] }, identifier: harness.identifier)
            let before = try await Self.accountRequests(harness)
            #expect(try await container.account().user == "alice")
            #expect(try await container.account().user == "alice")
            current.withLock { $0 = 1 }
            #expect(try await container.account().user == "bob")
            #expect(try await Self.accountRequests(harness) == before + 2)
        }
    }

    /// The service refuses the remembered token (the account is gone behind it): the request
    /// fails, and the next ask reaches the service and says so.
    @Test func aRefusedTokenIsAskedAboutAgain() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let container = try await harness.container(user: "alice")
            #expect(try await container.account().status == .available)
            cloud.setAccountStatus(.noAccount, for: "alice")
            #expect(try await container.account().status == .available, "remembered: no request")
            await #expect(throws: CloudError.notAuthenticated) {
                _ = try await container.privateDatabase.fetchDatabaseChanges(since: nil)
            }
            #expect(try await container.account() == CloudAccount(status: .noAccount, user: nil))
        }
    }
}
