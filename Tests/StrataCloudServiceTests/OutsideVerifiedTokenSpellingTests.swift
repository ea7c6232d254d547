import Foundation
import Synchronization
import Testing

@testable import StrataCloudService

/// `VerifiedTokens` says it remembers a token "by its exact text", but it keys a Swift
/// `[String: Entry]`: Swift's `String` equality and hashing follow Unicode canonical
/// equivalence, not the scalars. U+212A KELVIN SIGN is canonically equivalent to "K" (a
/// singleton decomposition), so a header spelling a remembered token with a Kelvin sign in
/// place of a "K" is answered from the memory, although jwt-kit refuses that text (it is not
/// base64url). One cached entry answers for a different token text.
@Suite(.timeLimit(.minutes(1)))
struct OutsideVerifiedTokenSpellingTests {
    /// A token the service's key signed whose text holds an ASCII "K".
    static func tokenWithK(now: Date) async throws -> String {
        for index in 0..<1_000 {
            let token = try await CloudServiceTokens.issue(user: "alice\(index)", key: VerifiedTokensTests.key, now: now)
            if token.unicodeScalars.contains("K") { return token }
        }
        Issue.record("no token with a K in 1,000")
        throw CancellationError()
    }

    /// `token` with every "K" written as U+212A KELVIN SIGN: other scalars, other UTF-8 bytes.
    static func kelvinSpelling(of token: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in token.unicodeScalars { scalars.append(scalar == "K" ? "\u{212A}" : scalar) }
        return String(scalars)
    }

    @Test func aCanonicallyEquivalentSpellingIsNotTheRememberedToken() async throws {
        let clock = VerifiedTokensTests.TestClock(Date())
        let token = try await Self.tokenWithK(now: clock.time.withLock { $0 })
        let kelvin = Self.kelvinSpelling(of: token)
        // Different text, byte for byte.
        #expect(!kelvin.utf8.elementsEqual(token.utf8))

        // Not remembered yet: jwt-kit refuses the Kelvin spelling.
        let fresh = await VerifiedTokensTests.verifier(clock: clock)
        #expect(await fresh.user(authorization: "Bearer \(kelvin)") == nil)

        // Once the real token verified, the Kelvin spelling must still be verified on its own,
        // and refused; the current code answers it from the memory with the real token's user.
        let verifier = await VerifiedTokensTests.verifier(clock: clock)
        #expect(await verifier.user(authorization: "Bearer \(token)") != nil)
        #expect(await verifier.user(authorization: "Bearer \(kelvin)") == nil, "answered from the memory of \(token)")
    }

    @Test func theMemoryComparesTextByItsBytes() {
        let tokens = VerifiedTokens(capacity: 8)
        tokens.remember("abcK.def.ghi", VerifiedTokens.Entry(user: "alice", expires: .distantFuture))
        #expect(tokens.entry(for: "abc\u{212A}.def.ghi") == nil)
    }
}
