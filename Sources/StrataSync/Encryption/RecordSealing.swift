import Crypto
import Foundation
import StrataCloud

/// Seals a record's fields into one authenticated ciphertext, and opens it again.
///
/// What stays readable is what the cloud's rules need: the record's zone, name, type, parent,
/// change tag and its fields' names and edit versions (the per-field merge and the cloud's
/// ordering read them). Every field value is inside the ciphertext. The record's identity
/// (zone, owner, name, type, parent), every field's name and version and the key version are
/// authenticated with it, so a ciphertext moved to another record, zone or parent, or paired
/// with other versions, fails to open.
///
/// ChaCha20-Poly1305 with a random 96-bit nonce per seal (swift-crypto); a zone key seals far
/// fewer than the 2^32 messages after which random nonces must not be trusted.
enum RecordSealing {
    /// How much newer than its key's retirement a record's edits may be: devices' clocks
    /// disagree by seconds, and a device may seal with the old key during the send it had
    /// started when another device rotated. Five minutes, in milliseconds.
    static let retirementGrace: Int64 = 5 * 60 * 1000

    /// The one field a sealed record carries.
    static let fieldName = "strata.sealed"
    /// The envelope's first bytes: format 1.
    static let magic: [UInt8] = [0x53, 0x31]

    /// `record` with its fields sealed under `key`.
    static func seal(_ record: CloudRecord, with key: ZoneKey) throws -> CloudRecord {
        let plaintext = Data(FastJSON.text(ofFields: record.fields).utf8)
        let box = try ChaChaPoly.seal(plaintext, using: key.key, authenticating: associatedData(of: record, version: key.version))
        var envelope = Data(capacity: 6 + box.combined.count)
        envelope.append(contentsOf: magic)
        withUnsafeBytes(of: UInt32(key.version).bigEndian) { envelope.append(contentsOf: $0) }
        envelope.append(box.combined)
        var sealed = record
        sealed.fields = [fieldName: .bytes(envelope)]
        return sealed
    }

    /// The key version a sealed record needs, or nil when `record` is not sealed.
    static func keyVersion(of record: CloudRecord) -> Int? {
        guard record.fields.count == 1, case .bytes(let envelope) = record.fields[fieldName] else { return nil }
        return headerVersion(of: envelope)
    }

    /// The key version an envelope's header names, or nil when `envelope` is not one (too
    /// short to hold a ciphertext, or without the magic). Read from its bytes in place:
    /// `starts(with:)` and a `reduce` over a `Data` slice went through `Data`'s generic
    /// iterator a byte at a time, a tenth of opening a record.
    static func headerVersion(of envelope: Data) -> Int? {
        guard envelope.count > 6 else { return nil }
        return envelope.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int? in
            guard bytes[0] == magic[0], bytes[1] == magic[1] else { return nil }
            return Int(bytes[2]) << 24 | Int(bytes[3]) << 16 | Int(bytes[4]) << 8 | Int(bytes[5])
        }
    }

    /// `record` with its fields opened by `key`.
    ///
    /// - Throws: ``EncryptionError/unsealedRecord(_:)`` when `record` holds no envelope;
    ///   ``EncryptionError/tamperedRecord(_:)`` when authentication fails or the envelope names
    ///   another key version than `key`'s; ``EncryptionError/retiredKey(_:version:)`` when
    ///   `key` was retired before one of the record's edits.
    static func open(_ record: CloudRecord, with key: ZoneKey) throws -> CloudRecord {
        guard case .bytes(let envelope) = record.fields[fieldName], let version = headerVersion(of: envelope) else {
            throw EncryptionError.unsealedRecord(record.id)
        }
        // The header is not inside the ciphertext: a version other than the key's is refused
        // here, so no two envelopes open to the same record.
        guard version == key.version else { throw EncryptionError.tamperedRecord(record.id) }
        let plaintext: Data
        do {
            let box = try ChaChaPoly.SealedBox(combined: envelope.dropFirst(6))
            plaintext = try ChaChaPoly.open(box, using: key.key, authenticating: associatedData(of: record, version: key.version))
        } catch {
            throw EncryptionError.tamperedRecord(record.id)
        }
        var plainKeys = true
        guard let text = String(data: plaintext, encoding: .utf8), let fields = FastJSON.fields(from: text, plainKeys: &plainKeys) else {
            throw EncryptionError.tamperedRecord(record.id)
        }
        if let retiredAt = key.retiredAt,
            record.fieldVersions.values.contains(where: { $0.milliseconds > retiredAt.milliseconds + retirementGrace })
        {
            throw EncryptionError.retiredKey(record.id, version: key.version)
        }
        var opened = record
        opened.fields = fields
        // The text the record arrived in, with the opened fields where the envelope was: the
        // plaintext is the fields' JSON, just read into `fields`. Kept only in the form Strata
        // writes (`CloudRecord.init(readingKeepingText:)`).
        opened.arrivedText = plainKeys ? record.arrivedText?.replacingFields(with: text) : nil
        return opened
    }

    /// What a sealed record authenticates beside its fields: its identity, parent, field
    /// names and versions, and the key version.
    /// Each text is length-prefixed, so no choice of names can make two different records
    /// authenticate the same bytes; versions are written as numbers, not formatted (this runs
    /// twice per record synced).
    static func associatedData(of record: CloudRecord, version: Int) -> Data {
        // Built in an array and copied into `Data` once: `Data.append` per piece cost half of
        // opening a record (a fetched page opens every record it holds).
        var bytes: [UInt8] = []
        bytes.reserveCapacity(96 + record.fieldVersions.count * 48)
        func append(_ text: String) {
            let count = text.utf8.count
            append(UInt32(count))
            bytes.append(contentsOf: text.utf8)
        }
        func append<Number: FixedWidthInteger>(_ number: Number) {
            withUnsafeBytes(of: number.bigEndian) { bytes.append(contentsOf: $0) }
        }
        append("strata.record.1")
        append(UInt32(version))
        append(record.id.zone.owner)
        append(record.id.zone.name)
        append(record.id.name)
        append(record.type)
        if let parent = record.parent {
            append(UInt8(1))
            append(parent.zone.owner)
            append(parent.zone.name)
            append(parent.name)
        } else {
            append(UInt8(0))
        }
        append(UInt32(record.fieldVersions.count))
        for (field, timestamp) in record.fieldVersions.sorted(by: { $0.key < $1.key }) {
            append(field)
            append(timestamp.milliseconds)
            append(timestamp.counter)
            append(timestamp.node)
        }
        return Data(bytes)
    }
}
