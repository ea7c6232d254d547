import Crypto
import Foundation
import Testing

@testable import StrataSync

/// A wrapped key opens for its recipient (or passphrase) and context only; a forged passphrase
/// envelope cannot make a device spend unbounded memory or time.
@Suite(.timeLimit(.minutes(2))) struct KeyWrappingTests {
    typealias F = EncryptionFixtures
    /// Cheap enough for tests: 128 KiB and a millisecond per try.
    static let cheap = KeyWrapping.ScryptCost(rounds: 1 << 10, blockSize: 1, parallelism: 1)
    let recipient = Curve25519.KeyAgreement.PrivateKey()
    let sender = Curve25519.KeyAgreement.PrivateKey()
    let secret = F.content(32, seed: 5)
    let context = "zone-key|strata.default@alice|3|bob"

    // MARK: HPKE

    @Test func sealedToARecipientOpensForItOnly() throws {
        for secret in [Data(), Data([0]), secret, F.content(10_000)] {
            let wrapped = try KeyWrapping.seal(secret, to: recipient.publicKey, from: sender, context: context)
            #expect(wrapped.count == 32 + secret.count + 16)
            #expect(KeyWrapping.open(wrapped, with: recipient, from: sender.publicKey, context: context) == secret)
            #expect(KeyWrapping.open(wrapped, with: Curve25519.KeyAgreement.PrivateKey(), from: sender.publicKey, context: context) == nil)
            #expect(KeyWrapping.open(wrapped, with: recipient, from: sender.publicKey, context: context + " ") == nil)
            #expect(KeyWrapping.open(wrapped, with: recipient, from: sender.publicKey, context: "") == nil)
            #expect(
                KeyWrapping.open(wrapped, with: recipient, from: sender.publicKey, context: "zone-key|strata.default@alice|4|bob") == nil)
        }
    }

    /// Anyone can seal to a public key; only the sender's seal opens as the sender's: the
    /// operator cannot plant a key of their own making in a user's key zone or share.
    @Test func aSealByAnyoneButTheSenderIsRefused() throws {
        let operatorKey = Curve25519.KeyAgreement.PrivateKey()
        let planted = try KeyWrapping.seal(secret, to: recipient.publicKey, from: operatorKey, context: context)
        #expect(KeyWrapping.open(planted, with: recipient, from: sender.publicKey, context: context) == nil)
        #expect(KeyWrapping.open(planted, with: recipient, from: operatorKey.publicKey, context: context) == secret)
    }

    @Test func twoSealsDifferAndBothOpen() throws {
        let first = try KeyWrapping.seal(secret, to: recipient.publicKey, from: sender, context: context)
        let second = try KeyWrapping.seal(secret, to: recipient.publicKey, from: sender, context: context)
        #expect(first != second)
        #expect(KeyWrapping.open(first, with: recipient, from: sender.publicKey, context: context) == secret)
        #expect(KeyWrapping.open(second, with: recipient, from: sender.publicKey, context: context) == secret)
    }

    @Test func everyFlippedTruncatedOrExtendedWrapIsRefused() throws {
        let wrapped = try KeyWrapping.seal(secret, to: recipient.publicKey, from: sender, context: context)
        for position in wrapped.indices {
            for mask: UInt8 in [0x01, 0x80] {
                var broken = wrapped
                broken[position] ^= mask
                #expect(
                    KeyWrapping.open(broken, with: recipient, from: sender.publicKey, context: context) == nil, "byte \(position) ^ \(mask)"
                )
            }
        }
        for length in 0..<wrapped.count {
            #expect(
                KeyWrapping.open(wrapped.prefix(length), with: recipient, from: sender.publicKey, context: context) == nil,
                "\(length) bytes")
        }
        #expect(KeyWrapping.open(wrapped + Data([0]), with: recipient, from: sender.publicKey, context: context) == nil)
        #expect(KeyWrapping.open(Data(count: 33), with: recipient, from: sender.publicKey, context: context) == nil)
        #expect(KeyWrapping.open(Data(count: 100), with: recipient, from: sender.publicKey, context: context) == nil)
        // A slice not starting at index 0 opens like the whole.
        #expect(
            KeyWrapping.open((Data([1, 2]) + wrapped).dropFirst(2), with: recipient, from: sender.publicKey, context: context) == secret)
    }

    @Test func theEncapsulatedKeyOfAnotherWrapIsRefused() throws {
        let first = try KeyWrapping.seal(secret, to: recipient.publicKey, from: sender, context: context)
        let second = try KeyWrapping.seal(secret, to: recipient.publicKey, from: sender, context: context)
        let spliced = first.prefix(32) + second.dropFirst(32)
        #expect(KeyWrapping.open(spliced, with: recipient, from: sender.publicKey, context: context) == nil)
    }

    // MARK: Passphrase

    @Test func sealedToAPassphraseOpensWithItOnly() throws {
        let passphrase = "correct horse battery staple"
        let envelope = try KeyWrapping.seal(secret, passphrase: passphrase, context: context, cost: Self.cheap)
        #expect(envelope.count == 16 + 12 + 12 + secret.count + 16)
        #expect(Array(envelope[16..<28]) == [0, 0, 4, 0, 0, 0, 0, 1, 0, 0, 0, 1])
        #expect(KeyWrapping.open(envelope, passphrase: passphrase, context: context) == secret)
        for wrong in ["", "correct horse battery stapl", "correct horse battery staple ", "Correct horse battery staple"] {
            #expect(KeyWrapping.open(envelope, passphrase: wrong, context: context) == nil, "\"\(wrong)\"")
        }
        #expect(KeyWrapping.open(envelope, passphrase: passphrase, context: "") == nil)
        #expect(KeyWrapping.open(envelope, passphrase: passphrase, context: "recovery|bob") == nil)
    }

    @Test func unusualPassphrasesRoundTrip() throws {
        for passphrase in ["", " ", "\u{0}", "pässwörd 🔑", String(repeating: "long ", count: 2_000)] {
            let envelope = try KeyWrapping.seal(secret, passphrase: passphrase, context: context, cost: Self.cheap)
            #expect(KeyWrapping.open(envelope, passphrase: passphrase, context: context) == secret)
        }
    }

    @Test func twoPassphraseSealsDiffer() throws {
        let first = try KeyWrapping.seal(secret, passphrase: "p", context: context, cost: Self.cheap)
        let second = try KeyWrapping.seal(secret, passphrase: "p", context: context, cost: Self.cheap)
        #expect(first.prefix(16) != second.prefix(16), "the salt repeats")
        #expect(first != second)
    }

    @Test func everyFlippedOrTruncatedPassphraseEnvelopeIsRefused() throws {
        let envelope = try KeyWrapping.seal(secret, passphrase: "p", context: context, cost: Self.cheap)
        for position in envelope.indices {
            for mask: UInt8 in [0x01, 0x80] {
                var broken = envelope
                broken[position] ^= mask
                #expect(KeyWrapping.open(broken, passphrase: "p", context: context) == nil, "byte \(position) ^ \(mask)")
            }
        }
        for length in 0..<envelope.count {
            #expect(KeyWrapping.open(envelope.prefix(length), passphrase: "p", context: context) == nil, "\(length) bytes")
        }
        #expect(KeyWrapping.open(envelope + Data([0]), passphrase: "p", context: context) == nil)
    }

    /// The envelope names its own cost, so the cloud (or whoever wrote it) chooses how much
    /// a device spends opening it: absurd costs are refused before scrypt runs.
    static let absurdCosts: [[Int]] = [
        [3, 8, 1], [0, 8, 1], [1 << 10 | 1, 8, 1], [1 << 21, 8, 1], [1 << 31, 8, 1], [Int(UInt32.max), 8, 1],
        [1 << 10, 0, 1], [1 << 10, 33, 1], [1 << 10, 1000, 1], [1 << 10, Int(UInt32.max), 1],
        [1 << 10, 8, 0], [1 << 10, 8, 5], [1 << 10, 8, 100], [1 << 10, 8, Int(UInt32.max)],
        // Within the per-parameter limits, but gigabytes (128 · rounds · blockSize bytes) or
        // minutes of work.
        [1 << 20, 32, 4], [1 << 20, 32, 1], [1 << 20, 8, 1], [1 << 19, 32, 1], [1 << 18, 32, 4], [1 << 20, 1, 4],
    ]

    @Test(arguments: absurdCosts)
    func absurdCostsAreRefusedWithoutRunningScrypt(_ parameters: [Int]) throws {
        let (rounds, blockSize, parallelism) = (parameters[0], parameters[1], parameters[2])
        let cost = KeyWrapping.ScryptCost(rounds: rounds, blockSize: blockSize, parallelism: parallelism)
        #expect(!cost.isBounded)
        var envelope = try KeyWrapping.seal(secret, passphrase: "p", context: context, cost: Self.cheap)
        for (offset, value) in [(16, rounds), (20, blockSize), (24, parallelism)] {
            withUnsafeBytes(of: UInt32(value).bigEndian) { envelope.replaceSubrange(offset..<(offset + 4), with: $0) }
        }
        let start = ContinuousClock.now
        #expect(KeyWrapping.open(envelope, passphrase: "p", context: context) == nil)
        #expect(ContinuousClock.now - start < .seconds(30), "a refused cost still ran for \(ContinuousClock.now - start)")
    }

    @Test func theDefaultCostAndCheapOnesAreBounded() {
        #expect(KeyWrapping.ScryptCost().isBounded)
        #expect(Self.cheap.isBounded)
        #expect(KeyWrapping.ScryptCost(rounds: 1, blockSize: 1, parallelism: 1).isBounded)
        #expect(KeyWrapping.ScryptCost(rounds: 1 << 16, blockSize: 8, parallelism: 2).isBounded)
    }

    /// The default cost really is what the envelope says, and opens (the one slow test here).
    @Test func theDefaultCostRoundTrips() throws {
        let envelope = try KeyWrapping.seal(secret, passphrase: "p", context: context)
        #expect(Array(envelope[16..<28]) == [0, 0, 0x80, 0, 0, 0, 0, 8, 0, 0, 0, 1])
        #expect(KeyWrapping.open(envelope, passphrase: "p", context: context) == secret)
    }
}
