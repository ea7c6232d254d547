import Foundation

// The hand-written JSON forms of the record types (`FastJSONCodable`), equal to what their
// `Codable` conformances write and read; FastJSONTests checks the two against each other on
// random and malformed input.

extension CloudZoneID: FastJSONCodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw("{\"name\":")
        writer.string(name)
        writer.raw(",\"owner\":")
        writer.string(owner)
        writer.raw("}")
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var name: String?
        var owner: String?
        try reader.object { reader, key throws(JSONReaderError) in
            switch key {
            case "name":
                guard name == nil else { throw reader.failure("a key twice") }
                name = try reader.string()
            case "owner":
                guard owner == nil else { throw reader.failure("a key twice") }
                owner = try reader.string()
            default: throw reader.failure("unknown key \(key)")
            }
        }
        guard let name, let owner else { throw reader.failure("a zone without its name or owner") }
        self.init(name: name, owner: owner)
    }
}

extension CloudRecordID: FastJSONCodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw("{\"name\":")
        writer.string(name)
        writer.raw(",\"zone\":")
        zone.write(to: &writer)
        writer.raw("}")
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var name: String?
        var zone: CloudZoneID?
        try reader.object { reader, key throws(JSONReaderError) in
            switch key {
            case "name":
                guard name == nil else { throw reader.failure("a key twice") }
                name = try reader.string()
            case "zone":
                guard zone == nil else { throw reader.failure("a key twice") }
                zone = try CloudZoneID(reading: &reader)
            default: throw reader.failure("unknown key \(key)")
            }
        }
        guard let name, let zone else { throw reader.failure("a record id without its name or zone") }
        self.init(name: name, zone: zone)
    }
}

extension HybridTimestamp: FastJSONCodable {
    /// ``description``, written in place: formatting a `String` first was most of the cost
    /// of writing a record's field versions.
    package func write(to writer: inout JSONWriter) {
        writer.byte("\"")
        writer.integer(milliseconds)
        writer.byte(".")
        writer.integer(Int64(counter))
        writer.byte("@")
        writer.stringContents(node)
        writer.byte("\"")
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var unused: (bytes: Range<Int>, timestamp: Self)?
        self = try Self.read(&reader, previous: &unused)
    }

    /// A timestamp read as ``init(reading:)`` reads it; text equal to the last one read
    /// (`previous`) is not parsed again. The columns of a row changed together carry one
    /// version, so a record's versions are mostly one text repeated: parsing each was most of
    /// the cost of reading a record's metadata.
    ///
    /// The repeated text is recognised by its bytes in the input, before any `String` is made
    /// of it (making one, and checking its UTF-8, was most of what the memo had left).
    package static func read(
        _ reader: inout JSONReader, previous: inout (bytes: Range<Int>, timestamp: Self)?
    ) throws(JSONReaderError) -> Self {
        try readNotingRepeat(&reader, previous: &previous).timestamp
    }

    /// ``read(_:previous:)``, and whether the text was the same bytes as the last one read.
    package static func readNotingRepeat(
        _ reader: inout JSONReader, previous: inout (bytes: Range<Int>, timestamp: Self)?
    ) throws(JSONReaderError) -> (timestamp: Self, repeated: Bool) {
        guard let bytes = try reader.plainString() else { return (try parse(reader.string(), reader: reader), false) }
        if let previous, reader.sameBytes(previous.bytes, bytes) { return (previous.timestamp, true) }
        let timestamp = try parse(reader.text(bytes), reader: reader)
        previous = (bytes, timestamp)
        return (timestamp, false)
    }

    private static func parse(_ text: String, reader: JSONReader) throws(JSONReaderError) -> Self {
        // The UTF-8 length bounds the scalar count: counting scalars walks the text.
        guard text.utf8.count <= Self.maximumTextLength || text.unicodeScalars.count <= Self.maximumTextLength,
            let timestamp = HybridTimestamp(text)
        else {
            throw reader.failure("not a hybrid timestamp")
        }
        return timestamp
    }
}

extension CloudAssetReference: FastJSONCodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw("{\"hash\":")
        writer.string(hash)
        writer.raw(",\"size\":")
        writer.integer(size)
        writer.raw("}")
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var hash: String?
        var size: Int64?
        try reader.object { reader, key throws(JSONReaderError) in
            switch key {
            case "hash":
                guard hash == nil else { throw reader.failure("a key twice") }
                hash = try reader.string()
            case "size":
                guard size == nil else { throw reader.failure("a key twice") }
                size = try reader.integer()
            default: throw reader.failure("unknown key \(key)")
            }
        }
        guard let hash, let size else { throw reader.failure("an asset reference without its hash or size") }
        self.init(hash: hash, size: size)
    }
}

extension CloudValue: FastJSONCodable {
    package func write(to writer: inout JSONWriter) {
        switch self {
        case .null: writer.raw("{\"null\":{}}")
        case .integer(let value):
            writer.raw("{\"integer\":{\"_0\":")
            writer.integer(value)
            writer.raw("}}")
        case .real(let value):
            writer.raw("{\"real\":{\"_0\":")
            writer.real(value)
            writer.raw("}}")
        case .text(let value):
            writer.raw("{\"text\":{\"_0\":")
            writer.string(value)
            writer.raw("}}")
        case .bytes(let value):
            writer.raw("{\"bytes\":{\"_0\":")
            writer.base64(value)
            writer.raw("}}")
        case .asset(let reference):
            writer.raw("{\"asset\":{\"_0\":")
            reference.write(to: &writer)
            writer.raw("}}")
        }
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var value: CloudValue?
        try reader.object { reader, key throws(JSONReaderError) in
            guard value == nil else { throw reader.failure("a value with two cases") }
            if key == "null" {
                try reader.object { reader, key throws(JSONReaderError) in throw reader.failure("unknown key \(key)") }
                value = .null
                return
            }
            try reader.object { reader, payloadKey throws(JSONReaderError) in
                guard payloadKey == "_0", value == nil else { throw reader.failure("unknown or repeated key \(payloadKey)") }
                switch key {
                case "integer": value = .integer(try reader.integer())
                case "real": value = .real(try reader.real())
                case "text": value = .text(try reader.string())
                case "bytes":
                    guard let data = Data(base64Encoded: try reader.string()) else { throw reader.failure("not base64") }
                    value = .bytes(data)
                case "asset": value = .asset(try CloudAssetReference(reading: &reader))
                default: throw reader.failure("unknown case \(key)")
                }
            }
            guard value != nil else { throw reader.failure("a value case without its payload") }
        }
        guard let value else { throw reader.failure("a value without a case") }
        self = value
    }
}

extension CloudRecord: FastJSONCodable {
    package func write(to writer: inout JSONWriter) {
        _ = writeReturningVersions(to: &writer)
    }

    /// The record's JSON and, when `withVersions`, its field versions' JSON cut out of it:
    /// equal to `FastJSON.text(ofVersions:)`, without writing the versions a second time (the
    /// engine stores both for every record it receives).
    package func text(withVersions: Bool) -> (record: String, versions: String?) {
        var writer = JSONWriter(capacity: 1_024)
        let versions = writeReturningVersions(to: &writer)
        return (writer.text, withVersions ? writer.text(in: versions) : nil)
    }

    /// Writes the record; returns where its versions' object is in `writer`.
    private func writeReturningVersions(to writer: inout JSONWriter) -> Range<Int> {
        // Sorted keys: changeTag, fieldVersions, fields, id, parent, type; nil optionals left out.
        writer.raw("{")
        if let changeTag {
            writer.raw("\"changeTag\":")
            writer.string(changeTag)
            writer.raw(",")
        }
        writer.raw("\"fieldVersions\":")
        let versionsStart = writer.count
        writer.versions(fieldVersions)
        let versions = versionsStart..<writer.count
        writer.raw(",\"fields\":")
        writer.object(fields) { writer, value in value.write(to: &writer) }
        writer.raw(",\"id\":")
        id.write(to: &writer)
        if let parent {
            writer.raw(",\"parent\":")
            parent.write(to: &writer)
        }
        writer.raw(",\"type\":")
        writer.string(type)
        writer.raw("}")
        return versions
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var unused = (versions: 0..<0, fields: 0..<0)
        var unusedCanonical = true
        try self.init(reading: &reader, ranges: &unused, canonicalVersions: &unusedCanonical)
    }

    /// A record read as ``init(reading:)`` reads it, carrying the text it was read from
    /// (``arrivedText``): what a client reads a page's records with.
    ///
    /// Only text in the form Strata writes is kept: a key spelled with an escape, or a version
    /// spelled with leading zeros, reads as the same record but not as the same JSON to
    /// `json_extract`, which users' views run on the stored text. Such a record (from a server
    /// other than `strata-cloud`, whose records PostgreSQL writes out plainly) keeps none and
    /// is written again.
    package init(readingKeepingText reader: inout JSONReader) throws(JSONReaderError) {
        let start = reader.valueStart()
        let escapedKeys = reader.escapedKeyCount
        var ranges = (versions: 0..<0, fields: 0..<0)
        var canonicalVersions = true
        try self.init(reading: &reader, ranges: &ranges, canonicalVersions: &canonicalVersions)
        guard canonicalVersions, reader.escapedKeyCount == escapedKeys else { return }
        let text = try reader.text(start..<reader.consumedCount)
        arrivedText = ArrivedRecordText(
            text: text, versions: (ranges.versions.lowerBound - start)..<(ranges.versions.upperBound - start),
            fields: (ranges.fields.lowerBound - start)..<(ranges.fields.upperBound - start))
    }

    /// Reads a record; `ranges` are where its versions' and fields' objects were in the input,
    /// and `canonicalVersions` is cleared when a version was not spelled as its `description`.
    private init(
        reading reader: inout JSONReader, ranges: inout (versions: Range<Int>, fields: Range<Int>),
        canonicalVersions: inout Bool
    ) throws(JSONReaderError) {
        var id: CloudRecordID?
        var type: String?
        var fields: [String: CloudValue]?
        var versions: [String: HybridTimestamp]?
        var parent: CloudRecordID?
        var parentSeen = false
        var changeTag: String?
        try reader.object { reader, key throws(JSONReaderError) in
            switch key {
            case "id":
                guard id == nil else { throw reader.failure("a key twice") }
                id = try CloudRecordID(reading: &reader)
            case "type":
                guard type == nil else { throw reader.failure("a key twice") }
                type = try reader.string()
            case "fields":
                guard fields == nil else { throw reader.failure("a key twice") }
                let start = reader.valueStart()
                fields = try reader.dictionary(capacity: 16) { reader throws(JSONReaderError) in try CloudValue(reading: &reader) }
                ranges.fields = start..<reader.consumedCount
            case "fieldVersions":
                guard versions == nil else { throw reader.failure("a key twice") }
                var previous: (bytes: Range<Int>, timestamp: HybridTimestamp)?
                let start = reader.valueStart()
                var canonical = true
                versions = try reader.dictionary(capacity: 16) { reader throws(JSONReaderError) in
                    let textStart = reader.valueStart()
                    let (version, repeated) = try HybridTimestamp.readNotingRepeat(&reader, previous: &previous)
                    // Every other spelling of a version is longer: leading zeros, `-0`, escapes.
                    // The same bytes as the last version read were checked with it.
                    if !repeated, reader.consumedCount - textStart != version.descriptionLength + 2 { canonical = false }
                    return version
                }
                ranges.versions = start..<reader.consumedCount
                canonicalVersions = canonical
            case "parent":
                guard !parentSeen else { throw reader.failure("a key twice") }
                parentSeen = true
                parent = try reader.consumeNull() ? nil : try CloudRecordID(reading: &reader)
            case "changeTag":
                guard changeTag == nil else { throw reader.failure("a key twice") }
                changeTag = try reader.consumeNull() ? nil : try reader.string()
            default: throw reader.failure("unknown key \(key)")
            }
        }
        guard let id, let type, let fields, let versions else { throw reader.failure("a record without its id, type, fields or versions") }
        self.init(id: id, type: type, fields: fields, fieldVersions: versions, parent: parent, changeTag: changeTag)
    }
}

extension CloudTombstone: FastJSONCodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw("{\"id\":")
        id.write(to: &writer)
        writer.raw(",\"type\":")
        writer.string(type)
        writer.raw("}")
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var id: CloudRecordID?
        var type: String?
        try reader.object { reader, key throws(JSONReaderError) in
            switch key {
            case "id":
                guard id == nil else { throw reader.failure("a key twice") }
                id = try CloudRecordID(reading: &reader)
            case "type":
                guard type == nil else { throw reader.failure("a key twice") }
                type = try reader.string()
            default: throw reader.failure("unknown key \(key)")
            }
        }
        guard let id, let type else { throw reader.failure("a tombstone without its id or type") }
        self.init(id: id, type: type)
    }
}

extension CloudChangeToken: FastJSONCodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw("{\"value\":")
        writer.string(value)
        writer.raw("}")
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var value: String?
        try reader.object { reader, key throws(JSONReaderError) in
            guard key == "value", value == nil else { throw reader.failure("unknown or repeated key \(key)") }
            value = try reader.string()
        }
        guard let value else { throw reader.failure("a token without its value") }
        self.init(value)
    }
}

extension FastJSON {
    /// A record's fields as a JSON object (what the stores keep).
    package static func text(ofFields fields: [String: CloudValue]) -> String {
        var writer = JSONWriter(capacity: 48 * fields.count + 2)
        writer.object(fields) { writer, value in value.write(to: &writer) }
        return writer.text
    }

    /// A record's field versions as a JSON object.
    package static func text(ofVersions versions: [String: HybridTimestamp]) -> String {
        var writer = JSONWriter(capacity: 64 * versions.count + 2)
        writer.versions(versions)
        return writer.text
    }

    /// Fields from their JSON object; nil when the fast reader refuses the text.
    package static func fields(from text: String) -> [String: CloudValue]? {
        var plainKeys = true
        return fields(from: text, plainKeys: &plainKeys)
    }

    /// Fields from their JSON object, as ``fields(from:)`` reads them; `plainKeys` is cleared
    /// when a key in the text was spelled with an escape (`JSONReader.escapedKeyCount`).
    package static func fields(from text: String, plainKeys: inout Bool) -> [String: CloudValue]? {
        var reader = JSONReader(text)
        guard let fields = try? reader.dictionary({ reader throws(JSONReaderError) in try CloudValue(reading: &reader) }),
            (try? reader.end()) != nil
        else { return nil }
        plainKeys = reader.escapedKeyCount == 0
        return fields
    }

    /// Field versions from their JSON object; nil when the fast reader refuses the text.
    package static func versions(from text: String) -> [String: HybridTimestamp]? {
        var reader = JSONReader(text)
        var previous: (bytes: Range<Int>, timestamp: HybridTimestamp)?
        let read = { (reader: inout JSONReader) throws(JSONReaderError) in try HybridTimestamp.read(&reader, previous: &previous) }
        guard let versions = try? reader.dictionary(capacity: 16, read), (try? reader.end()) != nil else { return nil }
        return versions
    }
}

extension JSONWriter {
    /// Field versions, as ``object(_:_:)`` writes them; a timestamp equal to the one before it
    /// is copied from the bytes written for that one. The columns of a row changed together
    /// carry one version, and formatting it once per column was most of writing a record's
    /// versions, which the engine does up to four times a record.
    package mutating func versions(_ versions: [String: HybridTimestamp]) {
        var previous: (timestamp: HybridTimestamp, bytes: Range<Int>)?
        object(versions) { writer, version in
            if let previous, previous.timestamp == version {
                writer.repeatBytes(at: previous.bytes)
                return
            }
            let start = writer.count
            version.write(to: &writer)
            previous = (version, start..<writer.count)
        }
    }
}
