import Foundation
import StrataCloudClient
import StrataCloudService
import StrataCloudWire
import StrataSync
import Synchronization
import Testing

/// Requests without a valid bearer token get 401 and never reach the backend.
@Suite(.timeLimit(.minutes(5))) struct AuthenticationTests {
    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Expiry is checked against the service's configured clock, not the system's: a test
    /// moves it, and a token expires at the second it says.
    @Test func expiryFollowsTheServicesClock() async throws {
        let clock = Mutex(Date(timeIntervalSince1970: 2_000_000_000))
        try await ServiceHarness.with(cloud: MockCloud(), configure: { $0.now = { clock.withLock { $0 } } }) { harness in
            let token = try await harness.token(user: "alice", expiresIn: .seconds(600), now: clock.withLock { $0 })
            func status() async throws -> Int {
                try await harness.send(
                    .POST, CloudRoute.database(.private, .fetchDatabaseChanges), authorization: "Bearer \(token)",
                    body: Data("{}".utf8)
                ).status
            }
            #expect(try await status() == 200)
            clock.withLock { $0 = $0.addingTimeInterval(599) }
            #expect(try await status() == 200, "a second before its expiry")
            clock.withLock { $0 = $0.addingTimeInterval(2) }
            #expect(try await status() == 401, "a second after")
            // Valid by the system's clock (issued now), expired by the service's, years ahead.
            let fresh = try await harness.token(user: "alice", expiresIn: .seconds(600))
            let refused = try await harness.send(
                .POST, CloudRoute.database(.private, .fetchDatabaseChanges), authorization: "Bearer \(fresh)", body: Data("{}".utf8))
            #expect(refused.status == 401)
        }
    }

    /// Tokens the service must refuse, by what is wrong with them.
    static func badTokens(_ harness: ServiceHarness) async throws -> [(String, String?)] {
        let valid = try await harness.token(user: "alice")
        let parts = valid.split(separator: ".").map(String.init)
        let expiry = Int(Date().timeIntervalSince1970) + 600
        let tampered = [parts[0], base64URL("{\"exp\":\(expiry),\"sub\":\"bob\"}"), parts[2]].joined(separator: ".")
        let unsigned = [base64URL("{\"alg\":\"none\",\"typ\":\"JWT\"}"), base64URL("{\"exp\":\(expiry),\"sub\":\"alice\"}"), ""]
            .joined(separator: ".")
        let noExpiry = try await signedWithoutExpiry(user: "alice")
        return [
            ("missing", nil),
            ("not bearer", "Basic YWxpY2U6c2VjcmV0"),
            ("garbage", "Bearer not-a-token"),
            (
                "expired",
                "Bearer " + (try await harness.token(user: "alice", expiresIn: .seconds(60), now: Date().addingTimeInterval(-3600)))
            ),
            ("wrong key", "Bearer " + (try await harness.token(user: "alice", key: "another-key-entirely-0123456789abcdef"))),
            ("tampered payload", "Bearer " + tampered),
            ("alg none", "Bearer " + unsigned),
            ("no expiry", "Bearer " + noExpiry),
        ]
    }

    /// A token signed with the right key but without `exp`, which the service requires.
    static func signedWithoutExpiry(user: String) async throws -> String {
        // HS256 by hand: the token kit refuses to issue a token its own payload type rejects.
        let header = base64URL("{\"alg\":\"HS256\",\"typ\":\"JWT\"}")
        let payload = base64URL("{\"sub\":\"\(user)\"}")
        let signature = HMACSHA256.sign("\(header).\(payload)", key: ServiceHarness.key)
        return "\(header).\(payload).\(signature)"
    }

    @Test func badTokensGet401AndNeverReachTheBackend() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            for (reason, authorization) in try await Self.badTokens(harness) {
                for path in [
                    CloudRoute.database(.private, .saveZones), CloudRoute.database(.shared, .fetchRecords), CloudRoute.acceptShare,
                ] {
                    let response = try await harness.send(.POST, path, authorization: authorization, body: Data("{\"zones\":[]}".utf8))
                    #expect(response.status == 401, "\(reason) on \(path)")
                    let body = try? CloudWire.makeDecoder().decode(ErrorResponse.self, from: response.body)
                    #expect(try body?.error.cloudError() == .notAuthenticated, "\(reason)")
                }
                let account = try await harness.send(.GET, CloudRoute.account, authorization: authorization)
                #expect(account.status == 401, "\(reason)")
                let changes = try await harness.send(.GET, CloudRoute.changes, authorization: authorization)
                #expect(changes.status == 401, "\(reason)")
            }
            for operation in MockCloud.Operation.allCases {
                #expect(cloud.requestCount(operation) == 0, "\(operation) reached the backend")
            }
            #expect(harness.service.openChangeStreamCount == 0)
        }
    }

    @Test func aClientWithABadTokenIsSignedOut() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let container = harness.container(token: try await harness.token(user: "alice", key: "wrong-key-wrong-key-wrong-key-wrong-key"))
            #expect(try await container.accountStatus() == .noAccount)
            await #expect(throws: CloudError.notAuthenticated) { _ = try await container.currentUser() }
            await #expect(throws: CloudError.notAuthenticated) { try await container.privateDatabase.saveZones([CloudScript.zone]) }
            #expect(cloud.zones(owner: "alice").isEmpty)
        }
    }

    @Test func aFailingTokenProviderIsNotAuthenticated() async throws {
        struct NoSession: Error {}
        let noToken: CloudServiceContainer.TokenProvider = { throw NoSession() }
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let container = CloudServiceContainer(baseURL: harness.baseURL, token: noToken, identifier: "test")
            let status = try await container.accountStatus()
            #expect(status == .noAccount)
            await #expect(throws: CloudError.notAuthenticated) { _ = try await container.privateDatabase.fetchDatabaseChanges(since: nil) }
        }
    }

    @Test func aValidTokenNamesTheUser() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let container = try await harness.container(user: "alice")
            #expect(try await container.accountStatus() == .available)
            #expect(try await container.currentUser() == "alice")
            cloud.setAccountStatus(.restricted, for: "alice")
            #expect(try await container.accountStatus() == .restricted)
            await #expect(throws: CloudError.notAuthenticated) { _ = try await container.currentUser() }
        }
    }

    @Test func healthAndMetricsNeedNoToken() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let health = try await harness.send(.GET, CloudRoute.health)
            #expect(health.status == 200)
            #expect(try CloudWire.makeDecoder().decode(HealthResponse.self, from: health.body) == HealthResponse())
            _ = try await harness.container(user: "alice").privateDatabase.fetchDatabaseChanges(since: nil)
            let metrics = try await harness.send(.GET, CloudRoute.metrics)
            #expect(metrics.status == 200)
            let text = String(decoding: metrics.body, as: UTF8.self)
            #expect(text.contains("strata_cloud_requests_total"))
            #expect(text.contains("route=\"/v1/private/fetchDatabaseChanges\""))
            #expect(text.contains("status=\"200\""))
            #expect(text.contains("strata_cloud_request_duration_seconds"))
        }
    }
}
