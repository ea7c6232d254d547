import Crypto
import Foundation
import _CryptoExtras

/// Seals small secrets (zone keys, a user's private key) to a Curve25519 public key with HPKE
/// (RFC 9180: X25519, HKDF-SHA256, ChaCha20-Poly1305), and to a passphrase with scrypt.
///
/// Every seal names what it is (`context`: the key's purpose, zone, version and recipient) in
/// HPKE's `info`, so a wrapped key cannot be presented as another one.
enum KeyWrapping {
    static let suite = HPKE.Ciphersuite.Curve25519_SHA256_ChachaPoly

    /// `secret` sealed to `recipient` by `sender` (HPKE's auth mode): the encapsulated key
    /// (32 bytes) then the ciphertext. Only the holder of `sender`'s private key can make a
    /// seal that opens with `sender`'s public key: whoever stores it (the operator) cannot
    /// plant a key of their own, though anyone can seal to a public key.
    static func seal(
        _ secret: Data, to recipient: Curve25519.KeyAgreement.PublicKey, from sender: Curve25519.KeyAgreement.PrivateKey, context: String
    ) throws -> Data {
        var hpke = try HPKE.Sender(recipientKey: recipient, ciphersuite: suite, info: Data(context.utf8), authenticatedBy: sender)
        let ciphertext = try hpke.seal(secret)
        return hpke.encapsulatedKey + ciphertext
    }

    /// The secret `wrapped` holds, or nil when it was not sealed to `privateKey` by `sender`
    /// for `context`.
    static func open(
        _ wrapped: Data, with privateKey: Curve25519.KeyAgreement.PrivateKey, from sender: Curve25519.KeyAgreement.PublicKey,
        context: String
    ) -> Data? {
        guard wrapped.count > 32 else { return nil }
        let start = wrapped.startIndex
        do {
            var recipient = try HPKE.Recipient(
                privateKey: privateKey, ciphersuite: suite, info: Data(context.utf8),
                encapsulatedKey: Data(wrapped[start..<(start + 32)]), authenticatedBy: sender)
            return try recipient.open(Data(wrapped[(start + 32)...]))
        } catch {
            return nil
        }
    }

    /// scrypt's cost: 2^15 rounds of 8 blocks (32 MiB and about a tenth of a second per try),
    /// OWASP's recommended minimum for a password that guards a key.
    struct ScryptCost: Sendable, Hashable {
        var rounds = 1 << 15
        var blockSize = 8
        var parallelism = 1

        /// Whether opening an envelope of this cost is bounded: at most 256 MiB (scrypt takes
        /// 128 · rounds · blockSize bytes) and 8 times the default's work. The per-parameter
        /// limits alone allowed 2^20 rounds of 32 blocks: 4 GiB and minutes per try.
        var isBounded: Bool {
            rounds.nonzeroBitCount == 1 && rounds <= 1 << 20 && (1...32).contains(blockSize) && (1...4).contains(parallelism)
                && rounds * blockSize <= 1 << 21 && rounds * blockSize * parallelism <= 1 << 21
        }
    }

    /// `secret` sealed under a key scrypt derives from `passphrase`: salt (16 bytes), the
    /// cost (three big-endian UInt32), then a ChaCha20-Poly1305 box.
    static func seal(_ secret: Data, passphrase: String, context: String, cost: ScryptCost = ScryptCost()) throws -> Data {
        var salt = Data(count: 16)
        salt.withUnsafeMutableBytes { buffer in
            var generator = SystemRandomNumberGenerator()
            for index in buffer.indices { buffer[index] = generator.next() }
        }
        let key = try passphraseKey(passphrase, salt: salt, cost: cost)
        let box = try ChaChaPoly.seal(secret, using: key, authenticating: Data(context.utf8))
        var envelope = salt
        for value in [cost.rounds, cost.blockSize, cost.parallelism] {
            withUnsafeBytes(of: UInt32(value).bigEndian) { envelope.append(contentsOf: $0) }
        }
        envelope.append(box.combined)
        return envelope
    }

    /// The secret a passphrase envelope holds, or nil when `passphrase` (or `context`) is not
    /// the one it was sealed with.
    static func open(_ envelope: Data, passphrase: String, context: String) -> Data? {
        guard envelope.count > 28 else { return nil }
        let start = envelope.startIndex
        let salt = envelope[start..<(start + 16)]
        func number(_ at: Int) -> Int {
            envelope[(start + at)..<(start + at + 4)].reduce(0) { $0 << 8 | Int($1) }
        }
        let cost = ScryptCost(rounds: number(16), blockSize: number(20), parallelism: number(24))
        // A forged envelope must not make a device spend unbounded memory or time.
        guard cost.isBounded else { return nil }
        do {
            let key = try passphraseKey(passphrase, salt: Data(salt), cost: cost)
            return try ChaChaPoly.open(
                ChaChaPoly.SealedBox(combined: envelope[(start + 28)...]), using: key, authenticating: Data(context.utf8))
        } catch {
            return nil
        }
    }

    private static func passphraseKey(_ passphrase: String, salt: Data, cost: ScryptCost) throws -> SymmetricKey {
        try KDF.Scrypt.deriveKey(
            // NFC: the same passphrase typed as "é" or as "e" and an accent derives one key.
            from: Data(passphrase.precomposedStringWithCanonicalMapping.utf8), salt: salt, outputByteCount: 32, rounds: cost.rounds,
            blockSize: cost.blockSize,
            parallelism: cost.parallelism)
    }
}
