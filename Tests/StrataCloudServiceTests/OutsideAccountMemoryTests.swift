import Foundation
import StrataCloudClient
import StrataCloudWire
import StrataSync
import StrataSyncTestSupport
import Synchronization
import Testing

/// An outside tester's attack on the client's account memory (`CloudServiceContainer.account()`
/// remembers an available account per bearer token, asks again for a new token, and once the
/// service refused the remembered one), from its documentation only.
@Suite(.timeLimit(.minutes(2)))
struct OutsideAccountMemoryTests {
    static func requests(_ harness: ServiceHarness, route: String, status: String? = nil) async throws -> Int {
        let text = String(decoding: try await harness.send(.GET, CloudRoute.metrics).body, as: UTF8.self)
        return text.split(separator: "\n")
            .filter { line in
                line.hasPrefix("strata_cloud_requests_total{") && line.contains("route=\"\(route)\"")
                    && (status.map { line.contains("status=\"\($0)\"") } ?? true)
            }
            .compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
            .reduce(0, +)
    }

    static func accountRequests(_ harness: ServiceHarness) async throws -> Int {
        try await requests(harness, route: CloudRoute.account)
    }

    /// A token provider that gives a new token (another expiry) on every call: every
    /// `account()` is a new token, so every one asks the service.
    @Test func aProviderWithANewTokenEachCallAsksEachTime() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let calls = Atomic(0)
            let container = CloudServiceContainer(
                baseURL: harness.baseURL,
                token: {
                    let n = calls.add(1, ordering: .relaxed).newValue
                    return try await harness.token(user: "alice", expiresIn: .seconds(600 + n))
                }, identifier: harness.identifier)
            let before = try await Self.accountRequests(harness)
            for _ in 0..<4 { #expect(try await container.account() == CloudAccount(status: .available, user: "alice")) }
            #expect(try await Self.accountRequests(harness) == before + 4, "four tokens, four requests")
        }
    }

    /// An account the service says is not available is not remembered: once it becomes
    /// available, the same token's `account()` says so; and the other way round only after a
    /// refusal.
    @Test(arguments: [CloudAccountStatus.noAccount, .restricted, .temporarilyUnavailable])
    func aNotAvailableAnswerIsNotRemembered(_ status: CloudAccountStatus) async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let container = try await harness.container(user: "alice")
            cloud.setAccountStatus(status, for: "alice")
            let first = try await container.account()
            #expect(first.status != .available, "\(status)")
            let before = try await Self.accountRequests(harness)
            #expect(try await container.account().status == first.status)
            #expect(try await Self.accountRequests(harness) == before + 1, "a not-available answer is asked again")
            cloud.setAccountStatus(.available, for: "alice")
            #expect(try await container.account() == CloudAccount(status: .available, user: "alice"))
            let remembered = try await Self.accountRequests(harness)
            #expect(try await container.account().status == .available)
            #expect(try await Self.accountRequests(harness) == remembered)
        }
    }

    /// A provider that first fails, then hands out a refused (expired) token, then a valid one,
    /// then the expired one again: every answer matches the token of that moment.
    @Test func refusedThenValidThenRefusedAgain() async throws {
        struct NoSession: Error {}
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let expired = try await harness.token(user: "alice", expiresIn: .seconds(60), now: Date().addingTimeInterval(-3600))
            let valid = try await harness.token(user: "alice")
            let which = Mutex(0)
            let container = CloudServiceContainer(
                baseURL: harness.baseURL,
                token: {
                    switch which.withLock({ $0 }) {
                    case 0: throw NoSession()
                    case 1: return expired
                    default: return valid
                    }
                }, identifier: harness.identifier)
            let noAccount = CloudAccount(status: .noAccount, user: nil)
            #expect(try await container.account() == noAccount, "no token")
            which.withLock { $0 = 1 }
            #expect(try await container.account() == noAccount, "expired token")
            #expect(try await container.account() == noAccount, "expired token, again")
            which.withLock { $0 = 2 }
            #expect(try await container.account() == CloudAccount(status: .available, user: "alice"))
            let before = try await Self.accountRequests(harness)
            #expect(try await container.account().user == "alice")
            #expect(try await Self.accountRequests(harness) == before, "the valid token is remembered")
            which.withLock { $0 = 1 }
            #expect(try await container.account() == noAccount, "back to the expired token: a new token, asked again")
            await #expect(throws: CloudError.notAuthenticated) { _ = try await container.privateDatabase.fetchDatabaseChanges(since: nil) }
            which.withLock { $0 = 0 }
            #expect(try await container.account() == noAccount, "no token at all: never the remembered account")
            which.withLock { $0 = 2 }
            #expect(try await container.account() == CloudAccount(status: .available, user: "alice"))
        }
    }

    /// Alice's token, then bob's, then alice's again, then bob's: each answer names the token's
    /// user, never the one remembered before.
    @Test func switchingBackAndForthNeverAnswersTheOtherUser() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let tokens = [try await harness.token(user: "alice"), try await harness.token(user: "bob")]
            let current = Mutex(0)
            let container = CloudServiceContainer(
                baseURL: harness.baseURL, token: { tokens[current.withLock { $0 }] }, identifier: harness.identifier)
            for (round, index) in [0, 1, 0, 1, 1, 0, 0].enumerated() {
                current.withLock { $0 = index }
                #expect(try await container.account().user == ["alice", "bob"][index], "round \(round)")
                #expect(try await container.currentUser() == ["alice", "bob"][index], "round \(round)")
            }
        }
    }

    /// Many `account()` calls at once with one token: all answer alice; afterwards none asks.
    @Test func concurrentCallsAllAnswerAndThenNoneAsks() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let container = try await harness.container(user: "alice")
            let before = try await Self.accountRequests(harness)
            let answers = try await withThrowingTaskGroup(of: CloudAccount.self) { group in
                for _ in 0..<24 { group.addTask { try await container.account() } }
                var all: [CloudAccount] = []
                for try await answer in group { all.append(answer) }
                return all
            }
            #expect(answers.count == 24)
            #expect(answers.allSatisfy { $0 == CloudAccount(status: .available, user: "alice") })
            let during = try await Self.accountRequests(harness) - before
            #expect(during >= 1 && during <= 24)
            let after = try await Self.accountRequests(harness)
            for _ in 0..<5 { _ = try await container.account() }
            #expect(try await Self.accountRequests(harness) == after)
        }
    }

    /// `accountStatus()` and `currentUser()` alongside: they answer what the service says now,
    /// and when the service refuses the remembered token on one of them, the next `account()`
    /// asks again.
    @Test func accountStatusAndCurrentUserAlongside() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let container = try await harness.container(user: "alice")
            #expect(try await container.account().status == .available)
            #expect(try await container.accountStatus() == .available)
            #expect(try await container.currentUser() == "alice")
            cloud.setAccountStatus(.noAccount, for: "alice")
            await #expect(throws: CloudError.notAuthenticated) { _ = try await container.currentUser() }
            #expect(try await container.account().status == .noAccount, "currentUser was refused: account() must ask again")
            cloud.setAccountStatus(.available, for: "alice")
            #expect(try await container.account().status == .available)
            cloud.setAccountStatus(.noAccount, for: "alice")
            #expect(try await container.accountStatus() == .noAccount)
            #expect(
                try await container.account().status == .noAccount,
                "the service just told this container the account is gone (accountStatus): account() still says available")
        }
    }

    /// Concurrent `account()` calls while the account is gone and a database request is
    /// refused: after the refusal, `account()` says so, however the calls interleaved.
    @Test func aRefusalAmidConcurrentCalls() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let container = try await harness.container(user: "alice")
            #expect(try await container.account().status == .available)
            cloud.setAccountStatus(.noAccount, for: "alice")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { _ = try await container.account() } }
                group.addTask {
                    await #expect(throws: CloudError.notAuthenticated) { try await container.privateDatabase.saveZones([CloudScript.zone]) }
                }
                try await group.waitForAll()
            }
            #expect(try await container.account() == CloudAccount(status: .noAccount, user: nil))
        }
    }

    /// The remembered token expires; the service refuses it on the change stream (and nowhere
    /// else); the next `account()` asks the service again and learns it is refused.
    @Test func aRefusalOnTheChangeStreamIsAskedAboutAgain() async throws {
        // The service's clock, moved by the test: the token expires when the test says so.
        let clock = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        try await ServiceHarness.with(cloud: MockCloud(), configure: { $0.now = { clock.withLock { $0 } } }) { harness in
            let token = try await harness.token(user: "alice", expiresIn: .seconds(600), now: clock.withLock { $0 })
            let container = harness.container(token: token)
            #expect(try await container.account() == CloudAccount(status: .available, user: "alice"))
            clock.withLock { $0 = $0.addingTimeInterval(601) }
            let probe = try await harness.send(
                .POST, CloudRoute.database(.shared, .fetchDatabaseChanges), authorization: "Bearer \(token)", body: Data("{}".utf8))
            #expect(probe.status == 401, "the service refuses the token once its clock is past the expiry")
            #expect(try await container.account().status == .available, "remembered: the container has not been refused yet")
            let before = try await Self.requests(harness, route: CloudRoute.changes, status: "401")
            let listening = Task {
                for await _ in container.changeHints() {}
            }
            // The stream connects at once, and is refused: waits on the service's own count.
            var seen = false
            for _ in 0..<20_000 where !seen {
                seen = try await Self.requests(harness, route: CloudRoute.changes, status: "401") > before
            }
            try #require(seen, "the change stream was never refused")
            // The service counted its 401 before the client read it: the client forgets the
            // token once the answer arrives, a round trip or so later.
            var account = try await container.account()
            for _ in 0..<2_000 where account.status == .available {
                _ = try await harness.send(.GET, CloudRoute.health)
                account = try await container.account()
            }
            listening.cancel()
            #expect(account == CloudAccount(status: .noAccount, user: nil), "refused on the change stream")
        }
    }
}

/// The wire form of `fetchDatabaseChanges`' `firstPages`: each entry validated as a
/// `fetchZoneChanges` body is, the error naming `firstPages[i].` and the field that body's
/// error names; more than eight is 413; the answer's shape.
@Suite(.timeLimit(.minutes(2)))
struct OutsideFirstPageWireTests {
    static func errorBody(_ data: Data) -> CloudErrorBody? {
        try? CloudWire.makeDecoder().decode(ErrorResponse.self, from: data).error
    }

    let zone = #"{"name":"z","owner":"alice"}"#

    /// The same entry as a zone's own fetch and as the second of two first pages: both refused
    /// with the same field (prefixed), or both accepted.
    @Test func eachEntryIsValidatedLikeAZoneFetch() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let token = try await harness.token(user: "alice")
            try await harness.container(user: "alice").privateDatabase.saveZones([CloudZoneID(name: "z", owner: "alice")])
            let long = String(repeating: "n", count: 257)
            let entries = [
                #"{"zone":\#(zone),"limit":0}"#,
                #"{"zone":\#(zone),"limit":-1}"#,
                #"{"zone":\#(zone),"limit":1001}"#,
                #"{"zone":\#(zone),"limit":1000}"#,
                #"{"zone":\#(zone),"limit":9223372036854775807}"#,
                #"{"zone":\#(zone),"limit":-9223372036854775808}"#,
                #"{"zone":\#(zone),"limit":"5"}"#,
                #"{"zone":\#(zone)}"#,
                #"{"zone":\#(zone),"limit":null}"#,
                #"{"limit":5}"#,
                #"{"zone":{"name":"z"},"limit":5}"#,
                #"{"zone":{"name":"\#(long)","owner":"alice"},"limit":5}"#,
                #"{"zone":{"name":"z","owner":"\#(long)"},"limit":5}"#,
                #"{"zone":{"name":"","owner":"alice"},"limit":5}"#,
                #"{"zone":{"name":"z","owner":"al\u0000ice"},"limit":5}"#,
                #"{"zone":\#(zone),"since":{"value":"a\u0000b"},"limit":5}"#,
                #"{"zone":\#(zone),"since":{"value":""},"limit":5}"#,
                #"{"zone":\#(zone),"since":{"value":"\#(String(repeating: "t", count: 5_000))"},"limit":5}"#,
                #"{"zone":\#(zone),"since":{},"limit":5}"#,
                #"{"zone":\#(zone),"since":null,"limit":5}"#,
                #"{"zone":\#(zone),"since":7,"limit":5}"#,
                #"{"zone":\#(zone),"limit":5,"extra":true}"#,
            ]
            let good = #"{"zone":\#(zone),"limit":5}"#
            for entry in entries {
                let own = try await harness.send(
                    .POST, CloudRoute.database(.private, .fetchZoneChanges), authorization: "Bearer \(token)", body: Data(entry.utf8))
                let asPage = try await harness.send(
                    .POST, CloudRoute.database(.private, .fetchDatabaseChanges), authorization: "Bearer \(token)",
                    body: Data(#"{"firstPages":[\#(good),\#(entry)]}"#.utf8))
                let label = String(entry.prefix(90))
                if own.status == 400 {
                    #expect(asPage.status == 400, "\(label): own fetch 400, as a first page \(asPage.status)")
                    let ownField = Self.errorBody(own.body)?.field
                    let pageField = Self.errorBody(asPage.body)?.field
                    #expect(
                        pageField == ownField.map { "firstPages[1].\($0)" },
                        "\(label): own \(String(describing: ownField)), page \(String(describing: pageField))")
                    #expect(Self.errorBody(asPage.body)?.code == "invalidRequest")
                } else {
                    // The own fetch got past validation (200, 410 expired, 404 zone...): the
                    // database's changes answer, with or without the page.
                    #expect(
                        asPage.status == 200,
                        "\(label): own fetch \(own.status), as a first page \(asPage.status) \(String(decoding: asPage.body.prefix(200), as: UTF8.self))"
                    )
                }
            }
        }
    }

    /// A limit that is a JSON number but not an integer (2.5, 1e30, 1.0e3) is refused naming
    /// the limit, as a string limit is, on the zone's own fetch and as a first page: it is valid
    /// JSON, and the field is known.
    @Test func aNonIntegralLimitNamesTheLimit() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            for limit in ["2.5", "1e30", "-0.5"] {
                let entry = #"{"zone":\#(zone),"limit":\#(limit)}"#
                let own = try await harness.send(
                    .POST, CloudRoute.database(.private, .fetchZoneChanges), authorization: "Bearer \(token)", body: Data(entry.utf8))
                #expect(own.status == 400)
                #expect(Self.errorBody(own.body)?.field == "limit", "\(limit): \(String(decoding: own.body, as: UTF8.self))")
                let asPage = try await harness.send(
                    .POST, CloudRoute.database(.private, .fetchDatabaseChanges), authorization: "Bearer \(token)",
                    body: Data(#"{"firstPages":[\#(entry)]}"#.utf8))
                #expect(asPage.status == 400)
                #expect(
                    Self.errorBody(asPage.body)?.field == "firstPages[0].limit", "\(limit): \(String(decoding: asPage.body, as: UTF8.self))"
                )
            }
        }
    }

    /// `firstPages` itself: not an array, null, empty, nine entries, nine with one invalid.
    @Test func theListItself() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let token = try await harness.token(user: "alice")
            func send(_ body: String) async throws -> (status: Int, body: Data, headers: [String: String]) {
                try await harness.send(
                    .POST, CloudRoute.database(.private, .fetchDatabaseChanges), authorization: "Bearer \(token)", body: Data(body.utf8))
            }
            let entry = #"{"zone":\#(zone),"limit":5}"#
            let object = try await send(#"{"firstPages":{}}"#)
            #expect(object.status == 400)
            #expect(Self.errorBody(object.body)?.field == "firstPages")
            for body in [#"{"firstPages":null}"#, #"{"firstPages":[]}"#, #"{"since":null,"firstPages":[]}"#] {
                let answer = try await send(body)
                #expect(answer.status == 200, "\(body)")
                let json = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
                #expect(json?["firstPages"] == nil, "\(body): absent when there are none")
            }
            let eight = "[" + Array(repeating: entry, count: 8).joined(separator: ",") + "]"
            #expect(try await send(#"{"firstPages":\#(eight)}"#).status == 200)
            let nine = "[" + Array(repeating: entry, count: 9).joined(separator: ",") + "]"
            let over = try await send(#"{"firstPages":\#(nine)}"#)
            #expect(over.status == 413)
            #expect(Self.errorBody(over.body)?.code == "limitExceeded")
            #expect(cloud.requestCount(.fetchDatabaseChanges) == 4, "the refused requests never reach the backend")
        }
    }

    /// The answer over the wire: one entry per zone that changed (a zone listed twice answered
    /// once, from its first entry), `{zone, page}`, zones whose names differ only in bytes
    /// answered as two, and both scopes.
    @Test func theAnswersShape() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let token = try await harness.token(user: "alice")
            let database = try await harness.container(user: "alice").privateDatabase
            let zones = [CloudZoneID(name: "caf\u{E9}", owner: "alice"), CloudZoneID(name: "cafe\u{301}", owner: "alice")]
            try await database.saveZones(zones)
            for (index, zone) in zones.enumerated() {
                let records = (0...index).map { CloudRecord(id: CloudRecordID(name: "r\($0)", zone: zone), type: "games") }
                _ = try await database.modifyRecords(saving: records, deleting: [])
            }
            let composed = #"{"name":"caf\u00e9","owner":"alice"}"#
            let decomposed = #"{"name":"cafe\u0301","owner":"alice"}"#
            let body =
                #"{"firstPages":[{"zone":\#(decomposed),"limit":1},{"zone":\#(composed),"limit":10},{"zone":\#(decomposed),"limit":10}]}"#
            let answer = try await harness.send(
                .POST, CloudRoute.database(.private, .fetchDatabaseChanges), authorization: "Bearer \(token)", body: Data(body.utf8))
            #expect(answer.status == 200)
            let json = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
            let pages = try #require(json["firstPages"] as? [[String: Any]])
            #expect(pages.count == 2, "two zones, each once")
            var byName: [[UInt32]: [String: Any]] = [:]
            for entry in pages {
                let zone = try #require(entry["zone"] as? [String: Any])
                let name = try #require(zone["name"] as? String)
                byName[name.unicodeScalars.map(\.value)] = try #require(entry["page"] as? [String: Any])
            }
            let composedPage = byName["caf\u{E9}".unicodeScalars.map(\.value)]
            let decomposedPage = byName["cafe\u{301}".unicodeScalars.map(\.value)]
            #expect((composedPage?["changed"] as? [Any])?.count == 1)
            #expect((decomposedPage?["changed"] as? [Any])?.count == 1, "the decomposed zone's first entry has limit 1")
            #expect(decomposedPage?["moreComing"] as? Bool == true)
            // Through the client: the same two pages.
            let changes = try await database.fetchDatabaseChanges(
                since: nil,
                firstPages: [
                    CloudZonePageRequest(zone: zones[1], since: nil, limit: 1), CloudZonePageRequest(zone: zones[0], since: nil, limit: 10),
                    CloudZonePageRequest(zone: zones[1], since: nil, limit: 10),
                ])
            #expect(changes.firstPages.count == 2)
            #expect(changes.firstPages[zones[0]]?.changed.map(\.id.name) == ["r0"])
            #expect(changes.firstPages[zones[1]]?.changed.map(\.id.name) == ["r0"])
            #expect(changes.firstPages[zones[1]]?.moreComing == true)
            // The shared scope validates the same way.
            let shared = try await harness.send(
                .POST, CloudRoute.database(.shared, .fetchDatabaseChanges), authorization: "Bearer \(token)",
                body: Data(#"{"firstPages":[{"zone":\#(composed),"limit":0}]}"#.utf8))
            #expect(shared.status == 400)
            #expect(Self.errorBody(shared.body)?.field == "firstPages[0].limit")
        }
    }
}

/// Engines talking to the service, with small pages: the first page travels over the wire
/// (sealed, for end-to-end encryption) and a small change needs no zone request.
@Suite(.timeLimit(.minutes(3)))
struct OutsideFirstPageThroughServiceTests {
    static func zoneRequests(_ harness: ServiceHarness) async throws -> Int {
        try await OutsideAccountMemoryTests.requests(harness, route: CloudRoute.database(.private, .fetchZoneChanges))
    }

    @Test(arguments: [1, 2, 3], [SyncEncryption.disabled, .endToEnd])
    func twoDevicesTakeTurnsThroughTheService(_ pageSize: Int, _ encryption: SyncEncryption) async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let phone = try await SyncTestDevice(
                "phone", container: harness.container(user: "alice"), fetchPageSize: pageSize, encryption: encryption)
            let laptop = try await SyncTestDevice(
                "laptop", container: harness.container(user: "alice"), fetchPageSize: pageSize, encryption: encryption)
            try await phone.execute("INSERT INTO games (id, title) VALUES ('g0', 'Start')")
            try await phone.engine.sendChanges()
            try await laptop.engine.fetchChanges()
            try await laptop.engine.fetchChanges()
            #expect(try await laptop.rows() == (try await phone.rows()))
            let script = [
                "UPDATE games SET title = 'caf\u{E9}' WHERE id = 'g0'",
                "INSERT INTO games (id, title) VALUES ('g1', 'One'), ('g2', 'Two'), ('g3', 'Three'), ('g4', 'Four')",
                "DELETE FROM games WHERE id = 'g2'; INSERT INTO players (id, gameID, name) VALUES ('p', 'g1', 'Pat')",
                "DELETE FROM games WHERE id = 'g1'; INSERT INTO games (id, title) VALUES ('g1', 'Again')",
                "UPDATE games SET score = 1",
            ]
            for (round, sql) in script.enumerated() {
                let (writer, reader) = round % 2 == 0 ? (phone, laptop) : (laptop, phone)
                try await writer.execute(sql)
                try await writer.engine.sendChanges()
                try await reader.engine.fetchChanges()
                #expect(try await reader.rows() == (try await writer.rows()), "round \(round)")
            }
            // One row changes on the phone: the laptop's fetch needs no zone request.
            try await laptop.engine.fetchChanges()
            try await phone.engine.fetchChanges()
            try await phone.execute("UPDATE games SET title = 'Small' WHERE id = 'g0'")
            try await phone.engine.sendChanges()
            let before = try await Self.zoneRequests(harness)
            try await laptop.engine.fetchChanges()
            #expect(try await laptop.rows() == (try await phone.rows()))
            #expect(try await Self.zoneRequests(harness) == before, "one change came with the list")
            #expect(try await laptop.pending() == 0)
            #expect(try await phone.pending() == 0)
        }
    }
}
