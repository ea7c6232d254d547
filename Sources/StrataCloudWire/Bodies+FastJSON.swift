import Foundation
import StrataCloud

// The hand-written JSON forms of the bodies that carry records by the hundred (StrataCloud's
// `FastJSONCodable`), equal to their `Codable` forms. Results carrying an error are rare (a
// conflict, a refusal): they are written through `JSONEncoder`, and a body holding one is
// read by `JSONDecoder` (the fast reader refuses it, and `FastJSON` falls back).

extension ModifyRecordsRequest: FastJSONCodable {
    package func write(to writer: inout JSONWriter) throws {
        writer.raw("{")
        if let answer {
            writer.raw("\"answer\":")
            writer.string(answer.rawValue)
            writer.raw(",")
        }
        writer.raw("\"deleting\":")
        writer.array(deleting) { writer, id in id.write(to: &writer) }
        writer.raw(",\"saving\":")
        writer.array(saving) { writer, record in record.write(to: &writer) }
        writer.raw("}")
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var saving: [CloudRecord]?
        var deleting: [CloudRecordID]?
        var answer: ModifyAnswer?
        var answered = false
        try reader.object { reader, key throws(JSONReaderError) in
            switch key {
            case "answer":
                guard !answered else { throw reader.failure("a key twice") }
                answered = true
                if try !reader.consumeNull() {
                    // An unknown value: `JSONDecoder` reads it again and names the field.
                    guard let value = ModifyAnswer(rawValue: try reader.string()) else { throw reader.failure("an unknown answer") }
                    answer = value
                }
            case "saving":
                guard saving == nil else { throw reader.failure("a key twice") }
                saving = try reader.array { reader throws(JSONReaderError) in try CloudRecord(reading: &reader) }
            case "deleting":
                guard deleting == nil else { throw reader.failure("a key twice") }
                deleting = try reader.array { reader throws(JSONReaderError) in try CloudRecordID(reading: &reader) }
            default: throw reader.failure("unknown key \(key)")
            }
        }
        guard let saving, let deleting else { throw reader.failure("a modify request without saving or deleting") }
        self.init(saving: saving, deleting: deleting, answer: answer)
    }
}

extension ModifyRecordsResponse: FastJSONCodable {
    package func write(to writer: inout JSONWriter) throws {
        writer.raw("{\"deleteResults\":[")
        for (index, result) in deleteResults.enumerated() {
            if index > 0 { writer.raw(",") }
            try Self.writeStart(of: result.id, error: result.error, to: &writer)
            writer.raw("}")
        }
        writer.raw("],\"saveResults\":[")
        for (index, result) in saveResults.enumerated() {
            if index > 0 { writer.raw(",") }
            if let tag = result.changeTag {
                // Sorted keys: changeTag comes first.
                writer.raw("{\"changeTag\":")
                writer.string(tag)
                writer.raw(",")
                try Self.writeStart(of: result.id, error: result.error, opened: true, to: &writer)
            } else {
                try Self.writeStart(of: result.id, error: result.error, to: &writer)
            }
            if let record = result.record {
                writer.raw(",\"record\":")
                record.write(to: &writer)
            }
            writer.raw("}")
        }
        writer.raw("]}")
    }

    /// A result's opening brace, its error if any, and its id (sorted keys: error, id, record).
    private static func writeStart(of id: CloudRecordID, error: CloudErrorBody?, opened: Bool = false, to writer: inout JSONWriter) throws {
        if !opened { writer.raw("{") }
        if let error {
            writer.raw("\"error\":")
            try writer.encoded(error)
            writer.raw(",")
        }
        writer.raw("\"id\":")
        id.write(to: &writer)
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var saves: [RecordResult]?
        var deletes: [DeleteResult]?
        try reader.object { reader, key throws(JSONReaderError) in
            switch key {
            case "saveResults":
                guard saves == nil else { throw reader.failure("a key twice") }
                saves = try reader.array { reader throws(JSONReaderError) in
                    var id: CloudRecordID?
                    var record: CloudRecord?
                    var changeTag: String?
                    try reader.object { reader, key throws(JSONReaderError) in
                        switch key {
                        case "id":
                            guard id == nil else { throw reader.failure("a key twice") }
                            id = try CloudRecordID(reading: &reader)
                        case "record":
                            guard record == nil else { throw reader.failure("a key twice") }
                            record = try reader.consumeNull() ? nil : try CloudRecord(reading: &reader)
                        case "changeTag":
                            guard changeTag == nil else { throw reader.failure("a key twice") }
                            changeTag = try reader.string()
                        default: throw reader.failure("unknown key \(key)")
                        }
                    }
                    guard let id else { throw reader.failure("a save result without its id") }
                    switch (record, changeTag) {
                    case (let record?, nil): return RecordResult(id: id, result: .success(record))
                    case (nil, let changeTag?): return RecordResult(id: id, changeTag: changeTag)
                    default: throw reader.failure("a save result needs a record or a change tag")
                    }
                }
            case "deleteResults":
                guard deletes == nil else { throw reader.failure("a key twice") }
                deletes = try reader.array { reader throws(JSONReaderError) in
                    var id: CloudRecordID?
                    try reader.object { reader, key throws(JSONReaderError) in
                        guard key == "id", id == nil else { throw reader.failure("unknown or repeated key \(key)") }
                        id = try CloudRecordID(reading: &reader)
                    }
                    guard let id else { throw reader.failure("a delete result without its id") }
                    return DeleteResult(id: id, result: .success(()))
                }
            default: throw reader.failure("unknown key \(key)")
            }
        }
        guard let saves, let deletes else { throw reader.failure("a modify response without its results") }
        saveResults = saves
        deleteResults = deletes
    }
}

extension ZoneChangesResponse {
    /// The response to a page whose records are JSON already: the body ``write(to:)`` writes
    /// for the same page, with the records' bytes copied as they are.
    package static func body(_ page: EncodedZoneChanges) -> [UInt8] {
        var writer = JSONWriter(capacity: page.changed.count + 64 * page.deleted.count + 128)
        writer.raw("{\"changed\":[")
        writer.json(bytes: page.changed)
        writer.raw("]")
        writeRest(
            deleted: page.deleted, moreComing: page.moreComing, remainingEstimate: page.remainingEstimate, token: page.token,
            followingTokens: page.followingTokens, to: &writer)
        return writer.bytes
    }

    /// What a page's body says of the page after it (`token`, `moreComing`), read while only
    /// passing over its records and tombstones: the next page is asked for with it while they
    /// are read (``ArrivingZoneChanges``). The body must be JSON, an object with exactly the
    /// page's keys, `changed` and `deleted` arrays; the records' and tombstones' own shapes
    /// are checked when they are read, and a body they fail is read as no page at all. Nil
    /// for a body this does not read; reading it whole then gives the answer and its error.
    package static func head(of body: Data) -> (token: CloudChangeToken, moreComing: Bool, followingTokens: [CloudChangeToken])? {
        var reader = JSONReader(body)
        var token: CloudChangeToken?
        var moreComing: Bool?
        var following: [CloudChangeToken] = []
        var seen: Set<String> = []
        do {
            try reader.object { reader, key throws(JSONReaderError) in
                guard seen.insert(key).inserted else { throw reader.failure("a key twice") }
                switch key {
                case "token": token = try CloudChangeToken(reading: &reader)
                case "moreComing": moreComing = try reader.bool()
                case "changed", "deleted": try reader.skipArray()
                case "remainingEstimate": if !(try reader.consumeNull()) { _ = try reader.integer() }
                case "followingTokens":
                    if !(try reader.consumeNull()) {
                        following = try reader.array { reader throws(JSONReaderError) in try CloudChangeToken(reading: &reader) }
                    }
                default: throw reader.failure("unknown key \(key)")
                }
            }
            try reader.end()
        } catch {
            return nil
        }
        guard let token, let moreComing, seen.contains("changed"), seen.contains("deleted") else { return nil }
        return (token, moreComing, following)
    }

    private static func writeRest(
        deleted: [CloudTombstone], moreComing: Bool, remainingEstimate: Int?, token: CloudChangeToken,
        followingTokens: [CloudChangeToken] = [], to writer: inout JSONWriter
    ) {
        writer.raw(",\"deleted\":")
        writer.array(deleted) { writer, tombstone in tombstone.write(to: &writer) }
        writer.raw(",\"moreComing\":")
        writer.bool(moreComing)
        if let remainingEstimate {
            writer.raw(",\"remainingEstimate\":")
            writer.integer(Int64(remainingEstimate))
        }
        writer.raw(",\"token\":")
        token.write(to: &writer)
        if !followingTokens.isEmpty {
            writer.raw(",\"followingTokens\":")
            writer.array(followingTokens) { writer, token in token.write(to: &writer) }
        }
        writer.raw("}")
    }
}

extension ZoneChangesResponse: FastJSONCodable {
    package func write(to writer: inout JSONWriter) throws {
        writer.raw("{\"changed\":")
        writer.array(changed) { writer, record in record.write(to: &writer) }
        Self.writeRest(
            deleted: deleted, moreComing: moreComing, remainingEstimate: remainingEstimate, token: token,
            followingTokens: followingTokens ?? [], to: &writer)
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var changed: [CloudRecord]?
        var deleted: [CloudTombstone]?
        var moreComing: Bool?
        var token: CloudChangeToken?
        var remainingEstimate: Int?
        var estimateSeen = false
        var followingTokens: [CloudChangeToken]?
        try reader.object { reader, key throws(JSONReaderError) in
            switch key {
            case "changed":
                guard changed == nil else { throw reader.failure("a key twice") }
                // The records keep their text: a device stores each one's JSON (`ArrivedRecordText`).
                changed = try reader.array { reader throws(JSONReaderError) in try CloudRecord(readingKeepingText: &reader) }
            case "deleted":
                guard deleted == nil else { throw reader.failure("a key twice") }
                deleted = try reader.array { reader throws(JSONReaderError) in try CloudTombstone(reading: &reader) }
            case "moreComing":
                guard moreComing == nil else { throw reader.failure("a key twice") }
                moreComing = try reader.bool()
            case "token":
                guard token == nil else { throw reader.failure("a key twice") }
                token = try CloudChangeToken(reading: &reader)
            case "remainingEstimate":
                guard !estimateSeen else { throw reader.failure("a key twice") }
                estimateSeen = true
                if try reader.consumeNull() { break }
                guard let estimate = Int(exactly: try reader.integer()) else { throw reader.failure("an estimate out of range") }
                remainingEstimate = estimate
            case "followingTokens":
                guard followingTokens == nil else { throw reader.failure("a key twice") }
                followingTokens =
                    try reader.consumeNull()
                    ? [] : try reader.array { reader throws(JSONReaderError) in try CloudChangeToken(reading: &reader) }
            default: throw reader.failure("unknown key \(key)")
            }
        }
        guard let changed, let deleted, let moreComing, let token else { throw reader.failure("a page without all its parts") }
        self.init(
            CloudZoneChanges(
                changed: changed, deleted: deleted, token: token, moreComing: moreComing, remainingEstimate: remainingEstimate,
                followingTokens: followingTokens ?? []))
    }
}

extension DatabaseChangesResponse: FastJSONCodable {
    package func write(to writer: inout JSONWriter) throws {
        writer.raw("{\"changedZones\":")
        writer.array(changedZones) { writer, zone in zone.write(to: &writer) }
        writer.raw(",\"deletedZones\":")
        writer.array(deletedZones) { writer, zone in zone.write(to: &writer) }
        if let firstPages {
            writer.raw(",\"firstPages\":[")
            for (index, first) in firstPages.enumerated() {
                if index > 0 { writer.raw(",") }
                writer.raw("{\"page\":")
                try first.page.write(to: &writer)
                writer.raw(",\"zone\":")
                first.zone.write(to: &writer)
                writer.raw("}")
            }
            writer.raw("]")
        }
        writer.raw(",\"token\":")
        token.write(to: &writer)
        writer.raw("}")
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var changedZones: [CloudZoneID]?
        var deletedZones: [CloudZoneID]?
        var token: CloudChangeToken?
        var firstPages: [ZoneFirstPage]?
        var pagesSeen = false
        try reader.object { reader, key throws(JSONReaderError) in
            switch key {
            case "changedZones":
                guard changedZones == nil else { throw reader.failure("a key twice") }
                changedZones = try reader.array { reader throws(JSONReaderError) in try CloudZoneID(reading: &reader) }
            case "deletedZones":
                guard deletedZones == nil else { throw reader.failure("a key twice") }
                deletedZones = try reader.array { reader throws(JSONReaderError) in try CloudZoneID(reading: &reader) }
            case "token":
                guard token == nil else { throw reader.failure("a key twice") }
                token = try CloudChangeToken(reading: &reader)
            case "firstPages":
                guard !pagesSeen else { throw reader.failure("a key twice") }
                pagesSeen = true
                if try reader.consumeNull() { break }
                firstPages = try reader.array { reader throws(JSONReaderError) in
                    var zone: CloudZoneID?
                    var page: ZoneChangesResponse?
                    try reader.object { reader, key throws(JSONReaderError) in
                        switch key {
                        case "zone":
                            guard zone == nil else { throw reader.failure("a key twice") }
                            zone = try CloudZoneID(reading: &reader)
                        case "page":
                            guard page == nil else { throw reader.failure("a key twice") }
                            page = try ZoneChangesResponse(reading: &reader)
                        default: throw reader.failure("unknown key \(key)")
                        }
                    }
                    guard let zone, let page else { throw reader.failure("a first page without its zone or page") }
                    return ZoneFirstPage(zone: zone, page: page)
                }
            default: throw reader.failure("unknown key \(key)")
            }
        }
        guard let changedZones, let deletedZones, let token else { throw reader.failure("database changes without all their parts") }
        self.changedZones = changedZones
        self.deletedZones = deletedZones
        self.token = token
        self.firstPages = firstPages
    }
}

extension JSONWriter {
    /// A value written by `JSONEncoder` with the wire's strategies, for the rare parts of a
    /// fast body that have no hand-written form.
    mutating func encoded(_ value: some Encodable) throws {
        append(contentsOf: try CloudWire.makeEncoder().encode(value))
    }
}
