import Crypto
import Foundation
import StrataCloud

/// One version of a zone's key: the symmetric key that seals the zone's records and assets.
///
/// A zone's first key is version 1; every rotation (a participant removed) adds the next one,
/// and retires the one before at the rotation's time: a record sealed with a retired version
/// whose edits are newer than its retirement was written by someone who lost access, and is
/// refused.
struct ZoneKey: Sendable, Hashable {
    var version: Int
    var key: SymmetricKey
    /// When the next version replaced this one; nil for the current version.
    var retiredAt: HybridTimestamp?

    static func == (lhs: ZoneKey, rhs: ZoneKey) -> Bool {
        lhs.version == rhs.version && lhs.retiredAt == rhs.retiredAt
            && lhs.key.withUnsafeBytes { l in rhs.key.withUnsafeBytes { r in l.elementsEqual(r) } }
    }

    func hash(into hasher: inout Hasher) { hasher.combine(version) }

    static func random(version: Int) -> ZoneKey {
        ZoneKey(version: version, key: SymmetricKey(size: .bits256))
    }

    var rawBytes: Data { key.withUnsafeBytes { Data($0) } }

    /// What a seal of this key carries: the 32 key bytes, then its retirement time (empty for
    /// the current version). Sealed together, so whoever stores the sealed key (the operator)
    /// cannot un-retire a version, or retire one, without the seal failing.
    var sealedPayload: Data { rawBytes + Data((retiredAt?.description ?? "").utf8) }
}
extension ZoneKey {
    /// The key a payload holds; nil when it is not one (a retirement time that does not parse
    /// is refused rather than read as "current").
    init?(version: Int, payload: Data) {
        guard payload.count >= 32 else { return nil }
        let start = payload.startIndex
        let rest = payload[(start + 32)...]
        var retiredAt: HybridTimestamp?
        if !rest.isEmpty {
            guard let text = String(data: rest, encoding: .utf8), let time = HybridTimestamp(text) else { return nil }
            retiredAt = time
        }
        self.init(version: version, key: SymmetricKey(data: payload[start..<(start + 32)]), retiredAt: retiredAt)
    }
}

/// Every key version of one zone this device holds.
struct ZoneKeys: Sendable, Hashable {
    var versions: [Int: ZoneKey] = [:]

    /// The version new records are sealed with.
    var current: ZoneKey? { versions.values.max { $0.version < $1.version } }
}
