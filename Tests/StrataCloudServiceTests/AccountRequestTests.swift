import Foundation
import StrataCloudWire
import StrataSync
import StrataSyncTestSupport
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

    /// A send and a fetch of an engine on the live client each ask once.
    @Test func anEngineAsksOncePerSendAndFetch() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let device = try await SyncTestDevice("a", container: harness.container(user: "alice"))
            try await device.execute("INSERT INTO games (id, title) VALUES ('g', 'Go')")
            try await device.engine.sendChanges()
            try await device.engine.fetchChanges()
            let before = try await Self.accountRequests(harness)
            try await device.execute("UPDATE games SET title = 'Chess'")
            try await device.engine.sendChanges()
            try await device.engine.fetchChanges()
            #expect(try await Self.accountRequests(harness) == before + 2)
        }
    }
}
