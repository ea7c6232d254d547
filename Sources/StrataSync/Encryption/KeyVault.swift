import Crypto
import Foundation
import StrataCloud

/// What a device's ``KeyStorage`` holds: each user's private key, the zone keys it opened, and
/// this device's enrollment key.
struct KeyVault: Codable, Sendable, Hashable {
    struct StoredZoneKey: Codable, Sendable, Hashable {
        var key: Data
        var retiredAt: String?
    }

    var format = 1
    /// Each user's Curve25519 key-agreement private key (raw 32 bytes).
    var identities: [String: Data] = [:]
    /// Zone keys by ``zoneKey(_:)`` and version.
    var zoneKeys: [String: [String: StoredZoneKey]] = [:]
    /// This device's enrollment private key, made when it first asks to be enrolled.
    var enrollmentKey: Data?

    /// `<owner's UTF-8 length>:<owner><zone name>`: no choice of names makes two zones share
    /// an entry.
    static func zoneKey(_ zone: CloudZoneID) -> String { "\(zone.owner.utf8.count):\(zone.owner)\(zone.name)" }

    /// The zone a ``zoneKey(_:)`` names; nil for anything else.
    static func zone(ofKey key: String) -> CloudZoneID? {
        guard let colon = key.firstIndex(of: ":"), let length = Int(key[..<colon]), length >= 0 else { return nil }
        let rest = Array(key[key.index(after: colon)...].utf8)
        guard rest.count >= length, let owner = String(bytes: rest[..<length], encoding: .utf8),
            let name = String(bytes: rest[length...], encoding: .utf8)
        else { return nil }
        return CloudZoneID(name: name, owner: owner)
    }

    func keys(of zone: CloudZoneID) -> ZoneKeys {
        var keys = ZoneKeys()
        for (version, stored) in zoneKeys[Self.zoneKey(zone)] ?? [:] {
            guard let number = Int(version) else { continue }
            keys.versions[number] = ZoneKey(
                version: number, key: SymmetricKey(data: stored.key), retiredAt: stored.retiredAt.flatMap(HybridTimestamp.init))
        }
        return keys
    }

    mutating func insert(_ key: ZoneKey, of zone: CloudZoneID) {
        zoneKeys[Self.zoneKey(zone), default: [:]][String(key.version)] = StoredZoneKey(
            key: key.rawBytes, retiredAt: key.retiredAt?.description)
    }

    func identity(of user: String) -> Curve25519.KeyAgreement.PrivateKey? {
        identities[user].flatMap { try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }
    }

    static func decode(_ data: Data, from storage: KeyStorage) throws -> KeyVault {
        do {
            return try JSONDecoder().decode(KeyVault.self, from: data)
        } catch {
            throw EncryptionError.keyStorage(path: storage.description, reason: "not a Strata key file: \(error)")
        }
    }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }
}

extension Curve25519.KeyAgreement.PublicKey {
    /// A short form people compare between devices: the first 8 bytes of the key's SHA-256.
    var fingerprint: String {
        SHA256.hash(data: rawRepresentation).prefix(8).map { String(format: "%02x", $0) }
            .chunked(2).joined(separator: "-")
    }
}

extension Array where Element == String {
    fileprivate func chunked(_ size: Int) -> [String] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)].joined() }
    }
}
