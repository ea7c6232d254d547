import Foundation
import StrataCloud
import StrataCloudWire

/// Checks every field of a request against the service's bounds before anything reaches the
/// backend, so bad input gets a permanent `InvalidRequest` naming the
/// field, never a trap, a database error, or "retry later".
struct RequestValidator: Sendable {
    let configuration: CloudServiceConfiguration

    /// A name (user, zone, record, type, field, change tag): at most
    /// ``CloudServiceConfiguration/maximumNameLength`` characters, no NUL (PostgreSQL text
    /// cannot hold one).
    func name(_ value: String, _ field: @autoclosure () -> String) throws(InvalidRequest) {
        // Unicode scalars, not `Character`s: JSON Schema counts code points, and grapheme
        // clusters would let a long run of combining marks pass as one character.
        // A text has at most as many scalars as UTF-8 bytes, which a native string knows
        // without walking it: most names are counted no further.
        let length = value.utf8.count <= configuration.maximumNameLength ? 0 : value.unicodeScalars.count
        guard length <= configuration.maximumNameLength else {
            throw InvalidRequest(field: field(), reason: "\(length) characters; at most \(configuration.maximumNameLength)")
        }
        try text(value, field())
    }

    /// Text of any length without NUL.
    func text(_ value: String, _ field: @autoclosure () -> String) throws(InvalidRequest) {
        // `memchr` over the contiguous bytes: `utf8.contains` went a byte at a time through
        // the collection protocol, over every field value and version of a request.
        let hasNUL =
            value.utf8.withContiguousStorageIfAvailable { utf8 in
                guard let base = utf8.baseAddress else { return false }
                return memchr(base, 0, utf8.count) != nil
            } ?? value.utf8.contains(0)
        guard !hasNUL else { throw InvalidRequest(field: field(), reason: "contains a NUL character") }
    }

    /// A count within `1...maximum` (`0...maximum` when `allowsZero`).
    func count(_ value: Int, atMost maximum: Int, _ field: @autoclosure () -> String, allowsZero: Bool = true) throws(InvalidRequest) {
        let minimum = allowsZero ? 0 : 1
        guard value >= minimum, value <= maximum else {
            throw InvalidRequest(field: field(), reason: "\(value) is outside \(minimum)...\(maximum)")
        }
    }

    /// A lowercase hexadecimal SHA-256.
    func hash(_ value: String, _ field: @autoclosure () -> String) throws(InvalidRequest) {
        guard value.utf8.count == 64, value.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            throw InvalidRequest(field: field(), reason: "not a lowercase hexadecimal SHA-256")
        }
    }

    func zone(_ zone: CloudZoneID, _ field: @autoclosure () -> String) throws(InvalidRequest) {
        try name(zone.name, field() + ".name")
        try name(zone.owner, field() + ".owner")
    }

    func recordID(_ id: CloudRecordID, _ field: @autoclosure () -> String) throws(InvalidRequest) {
        try name(id.name, field() + ".name")
        try zone(id.zone, field() + ".zone")
    }

    func token(_ token: CloudChangeToken?, _ field: @autoclosure () -> String) throws(InvalidRequest) {
        guard let token else { return }
        try text(token.value, field())
    }

    func record(_ record: CloudRecord, _ field: @autoclosure () -> String) throws(InvalidRequest) {
        try recordID(record.id, field() + ".id")
        try name(record.type, field() + ".type")
        if let parent = record.parent { try recordID(parent, field() + ".parent") }
        if let tag = record.changeTag { try name(tag, field() + ".changeTag") }
        for (key, value) in record.fields {
            try name(key, field() + ".fields")
            try self.value(value, field() + ".fields." + Self.printable(key))
        }
        for (key, version) in record.fieldVersions {
            try name(key, field() + ".fieldVersions")
            try name(version.node, field() + ".fieldVersions." + Self.printable(key) + ".node")
        }
    }

    /// A field value: text without NUL, an asset reference with a valid hash and size. Reals
    /// may be NaN or infinite: the wire format carries them and the store keeps them.
    func value(_ value: CloudValue, _ field: @autoclosure () -> String) throws(InvalidRequest) {
        switch value {
        case .text(let text): try self.text(text, field())
        case .asset(let reference):
            try hash(reference.hash, field() + ".hash")
            guard reference.size >= 0 else { throw InvalidRequest(field: field() + ".size", reason: "negative") }
        case .null, .integer, .real, .bytes: break
        }
    }

    /// An uploaded asset's description: its hash, its sizes within bounds (the declared size
    /// bounds the work of checking the content), and known chunk encodings.
    func asset(_ asset: CloudAsset, _ field: @autoclosure () -> String) throws(InvalidRequest) {
        try hash(asset.hash, field() + ".hash")
        guard asset.size >= 0, asset.size <= configuration.maximumAssetBytes else {
            throw InvalidRequest(field: field() + ".size", reason: "\(asset.size) is outside 0...\(configuration.maximumAssetBytes)")
        }
        guard asset.chunkSize > 0, asset.chunkSize <= Self.maximumChunkSize else {
            throw InvalidRequest(field: field() + ".chunkSize", reason: "\(asset.chunkSize) is outside 1...\(Self.maximumChunkSize)")
        }
        for (index, chunk) in asset.chunks.enumerated() {
            let path = "\(field()).chunks[\(index)]"
            guard chunk.size >= 0 else {
                throw InvalidRequest(field: path + ".size", reason: "\(chunk.size) is negative")
            }
            guard (CloudAsset.Chunk.storedEncoding...CloudAsset.Chunk.sealedEncoding).contains(chunk.encoding) else {
                throw InvalidRequest(
                    field: path + ".encoding", reason: "\(chunk.encoding); expected 0 (stored), 1 (deflate) or 2 (sealed)")
            }
        }
    }

    /// Whether an asset's parts agree with each other: each chunk within `chunkSize`. A
    /// well-formed request can carry an asset whose parts disagree, which no schema can say
    /// (as a hash its content does not have), so this is `invalidAsset` (422) naming the
    /// asset, like the store's checks that the chunks add up to the size and the content to
    /// the hash; run before the store is asked, since the sizes bound the work of checking.
    func consistency(of asset: CloudAsset, _ field: @autoclosure () -> String) throws(CloudError) {
        for (index, chunk) in asset.chunks.enumerated() where chunk.size > asset.chunkSize {
            throw .invalidAsset(
                asset.hash, reason: "\(field()).chunks[\(index)].size \(chunk.size) is over its chunkSize \(asset.chunkSize)")
        }
    }

    func share(_ share: CloudShare, _ field: @autoclosure () -> String) throws(InvalidRequest) {
        try recordID(share.rootRecordID, field() + ".rootRecordID")
        if let title = share.title { try name(title, field() + ".title") }
        if let tag = share.changeTag { try name(tag, field() + ".changeTag") }
        if let user = share.currentUser { try name(user, field() + ".currentUser") }
        for (index, participant) in share.participants.enumerated() {
            try name(participant.user, "\(field()).participants[\(index)].user")
        }
        for entry in share.wrappedKeys.keys { try name(entry, field() + ".wrappedKeys") }
    }

    /// The largest chunk StrataAssets writes, 64 MiB.
    static let maximumChunkSize: Int64 = 64 << 20

    /// A key as it can appear in a field path: at most 64 characters, no control characters.
    static func printable(_ key: String) -> String {
        let cleaned = String(
            String.UnicodeScalarView(key.unicodeScalars.prefix(64).map { $0.properties.generalCategory == .control ? "?" : $0 }))
        return key.unicodeScalars.count > 64 ? cleaned + "…" : cleaned
    }
}
