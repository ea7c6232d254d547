import Foundation
import NIOHTTP1
import StrataCloudWire
import StrataSync
import Testing

/// `GET` and `PUT /v1/profile` at their bounds: what the document allows is stored (the name
/// trimmed), anything else is a permanent 400 naming `displayName` or `email`, never a trap
/// or a 5xx.
@Suite(.timeLimit(.minutes(2)))
struct ProfileRequestTests {
    typealias Answer = SchemaAgreementTests.Answer

    static func send(
        _ harness: ServiceHarness, _ method: HTTPMethod, user: String = "alice", _ body: String? = nil
    ) async throws -> (answer: Answer, body: String, headers: [String: String]) {
        let token = try await harness.token(user: user)
        let response = try await harness.send(
            method, CloudRoute.profile, authorization: "Bearer \(token)", body: body.map { Data($0.utf8) })
        let error = EdgeTests.errorBody(response.body)
        return (
            Answer(status: response.status, field: error?.field, code: error?.code), String(decoding: response.body, as: UTF8.self),
            response.headers
        )
    }

    static func json(_ value: String) -> String { SchemaAgreementTests.json(value) }

    @Test func aProfileIsSetTrimmedAndReadBack() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            #expect(try await Self.send(harness, .GET).body == "{}")
            let set = try await Self.send(harness, .PUT, "{\"displayName\":\" Alice \",\"email\":\"alice@example.com\"}")
            #expect(set.answer.status == 200)
            #expect(set.body == "{}")
            #expect(
                try await Self.send(harness, .GET).body == "{\"profile\":{\"displayName\":\"Alice\",\"email\":\"alice@example.com\"}}")
            // Each user reads their own only.
            #expect(try await Self.send(harness, .GET, user: "bob").body == "{}")
            // A null email is none, as the document allows.
            #expect(try await Self.send(harness, .PUT, "{\"displayName\":\"Alice\",\"email\":null}").answer.status == 200)
            #expect(try await Self.send(harness, .GET).body == "{\"profile\":{\"displayName\":\"Alice\"}}")
            _ = try await Self.send(harness, .PUT, "{\"displayName\":\"Alice\"}")
            #expect(try await Self.send(harness, .GET).body == "{\"profile\":{\"displayName\":\"Alice\"}}")
        }
    }

    @Test func namesAndAddressesAtTheirBoundsAgreeWithTheDocument() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let accepted = [
                String(repeating: "😀", count: 256), " \t" + String(repeating: "n", count: 256) + "\u{3000}\n", "A", "Ann\u{a0}Lee",
                "\u{85}Bob\u{2028}",
            ]
            for name in accepted {
                let answer = try await Self.send(harness, .PUT, "{\"displayName\":\(Self.json(name))}").answer
                #expect(answer.status == 200, "\(name.prefix(20)): \(answer)")
            }
            let refused = ["", " ", "\t\n", String(repeating: "n", count: 257), "A\u{0}B", "A\tB", "\u{1}A", "A\u{7f}", "A\u{9f}B"]
            for name in refused {
                let answer = try await Self.send(harness, .PUT, "{\"displayName\":\(Self.json(name))}").answer
                #expect(answer.status == 400, "\(name.prefix(20)): \(answer)")
                #expect(answer.field == "displayName", "\(name.prefix(20)): \(answer)")
                #expect(answer.code == "invalidRequest")
            }
            let addresses = ["a@b", String(repeating: "a", count: 316) + "@b.c", "ünï@cödé.example"]
            for email in addresses {
                let answer = try await Self.send(harness, .PUT, "{\"displayName\":\"A\",\"email\":\(Self.json(email))}").answer
                #expect(answer.status == 200, "\(email.prefix(20)): \(answer)")
            }
            let wrong = [
                "", "a", "@b", "a@", "a@b@c", "a b@c", "a@b\u{a0}c", "a@b\n", "a\u{0}@b", String(repeating: "a", count: 317) + "@b.c",
            ]
            for email in wrong {
                let answer = try await Self.send(harness, .PUT, "{\"displayName\":\"A\",\"email\":\(Self.json(email))}").answer
                #expect(answer.status == 400, "\(email.prefix(20)): \(answer)")
                #expect(answer.field == "email", "\(email.prefix(20)): \(answer)")
            }
        }
    }

    @Test func malformedBodiesAreRefusedNeverTrapped() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let bodies = [
                "", "{}", "null", "[]", "{\"displayName\":null}", "{\"displayName\":12}", "{\"displayName\":\"A\",\"email\":12}",
                "{\"displayName\":[\"A\"]}", "{\"displayName\"", "\u{0}",
            ]
            for body in bodies {
                let answer = try await Self.send(harness, .PUT, body).answer
                #expect(answer.status == 400, "\(body): \(answer)")
            }
            let missing = try await Self.send(harness, .PUT, "{\"email\":\"a@b\"}").answer
            #expect(missing.field == "displayName")
            #expect(try await Self.send(harness, .GET).body == "{}")
        }
    }

    @Test func otherMethodsAreNotAllowedAndTheRouteNeedsAToken() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let post = try await Self.send(harness, .POST, "{\"displayName\":\"A\"}")
            #expect(post.answer.status == 405)
            #expect(post.headers["allow"] == "GET, PUT")
            let anonymous = try await harness.send(.PUT, CloudRoute.profile, body: Data("{\"displayName\":\"A\"}".utf8))
            #expect(anonymous.status == 401)
        }
    }
}
