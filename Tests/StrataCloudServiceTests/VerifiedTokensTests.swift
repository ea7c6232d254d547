import Foundation
import Synchronization
import Testing

@testable import StrataCloudService

/// A token verified once is remembered by its exact text (`VerifiedTokens`): its expiry is
/// still checked at each request, a token differing in any character is verified on its own,
/// and the memory stays within its capacity.
@Suite(.timeLimit(.minutes(1)))
struct VerifiedTokensTests {
    static let key = String(repeating: "k", count: 32)

    /// The service's clock, moved by the test.
    final class TestClock: Sendable {
        let time: Mutex<Date>
        init(_ start: Date) { time = Mutex(start) }
    }

    static func verifier(clock: TestClock) async -> TokenVerifier {
        TokenVerifier(keys: await CloudServiceTokens.keyCollection(key: key), now: { clock.time.withLock { $0 } })
    }

    @Test func aRememberedTokenStillExpiresAtItsSecond() async throws {
        let start = Date(timeIntervalSince1970: 2_000_000_000)
        let clock = TestClock(start)
        let verifier = await Self.verifier(clock: clock)
        let token = try await CloudServiceTokens.issue(user: "alice", key: Self.key, expiresIn: .seconds(600), now: start)
        #expect(await verifier.user(authorization: "Bearer \(token)") == "alice")
        #expect(verifier.verified.count == 1)
        clock.time.withLock { $0 = start.addingTimeInterval(599) }
        #expect(await verifier.user(authorization: "Bearer \(token)") == "alice")
        // jwt-kit's rule: from its `exp` on, a token is expired.
        clock.time.withLock { $0 = start.addingTimeInterval(600) }
        #expect(await verifier.user(authorization: "Bearer \(token)") == nil)
        #expect(await verifier.user(authorization: "bearer   \(token)  ") == nil)
        clock.time.withLock { $0 = start.addingTimeInterval(10_000) }
        #expect(await verifier.user(authorization: "Bearer \(token)") == nil)
    }

    @Test func aTokenDifferingInAnyCharacterIsVerifiedOnItsOwn() async throws {
        let clock = TestClock(Date())
        let verifier = await Self.verifier(clock: clock)
        let token = try await CloudServiceTokens.issue(user: "alice", key: Self.key, now: clock.time.withLock { $0 })
        #expect(await verifier.user(authorization: "Bearer \(token)") == "alice")
        var refused = 0
        for index in token.indices where token[index] != "." {
            for replacement in ["A", "_"] where String(token[index]) != replacement {
                var forged = token
                forged.replaceSubrange(index...index, with: replacement)
                // A base64url character whose low bits are unused decodes to the same bytes:
                // such a token verifies on its own, and names the same user.
                if let user = await verifier.user(authorization: "Bearer \(forged)") {
                    #expect(user == "alice", "\(forged)")
                } else {
                    refused += 1
                }
            }
        }
        #expect(refused > token.count)
        // Signed with another key, for another user: never the remembered one's answer.
        let other = try await CloudServiceTokens.issue(
            user: "mallory", key: String(repeating: "m", count: 32), now: clock.time.withLock { $0 })
        #expect(await verifier.user(authorization: "Bearer \(other)") == nil)
        let bob = try await CloudServiceTokens.issue(user: "bob", key: Self.key, now: clock.time.withLock { $0 })
        #expect(await verifier.user(authorization: "Bearer \(bob)") == "bob")
    }

    @Test func theMemoryStaysWithinItsCapacity() async throws {
        let tokens = VerifiedTokens(capacity: 3)
        for index in 0..<10 {
            tokens.remember("t\(index)", VerifiedTokens.Entry(user: "u\(index)", expires: .distantFuture))
            #expect(tokens.count <= 3)
            #expect(tokens.entry(for: "t\(index)")?.user == "u\(index)")
        }
        // Remembering a known token again at capacity forgets nothing.
        let before = tokens.count
        tokens.remember("t9", VerifiedTokens.Entry(user: "u9", expires: .distantFuture))
        #expect(tokens.count == before)
    }
}
