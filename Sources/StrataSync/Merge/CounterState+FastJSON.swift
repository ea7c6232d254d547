import StrataCloud

// The hand-written JSON form of a counter's state, the same text its `Codable` conformance
// writes (CounterStateTests checks both ways): every change of a counter reads and writes
// one, and `JSONEncoder` and `JSONDecoder` cost more than the rest of the work on a record
// (see `SyncJSON`).

extension CounterState.Lane: FastJSONCodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw("{\"value\":")
        writer.integer(value)
        writer.raw(",\"version\":")
        version.write(to: &writer)
        writer.raw("}")
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var value: Int64?
        var version: HybridTimestamp?
        try reader.object { reader, key throws(JSONReaderError) in
            switch key {
            case "value":
                guard value == nil else { throw reader.failure("a key twice") }
                value = try reader.integer()
            case "version":
                guard version == nil else { throw reader.failure("a key twice") }
                version = try HybridTimestamp(reading: &reader)
            default: throw reader.failure("unknown key \(key)")
            }
        }
        guard let value, let version else { throw reader.failure("a counter lane without its value or version") }
        self.init(value: value, version: version)
    }
}

extension CounterState: FastJSONCodable {
    package func write(to writer: inout JSONWriter) {
        writer.raw("{")
        if let base {
            writer.raw("\"base\":")
            base.write(to: &writer)
            writer.raw(",")
        }
        writer.raw("\"devices\":")
        writer.object(devices) { writer, lane in lane.write(to: &writer) }
        writer.raw("}")
    }

    package init(reading reader: inout JSONReader) throws(JSONReaderError) {
        var base: Lane?
        var devices: [String: Lane]?
        try reader.object { reader, key throws(JSONReaderError) in
            switch key {
            case "base":
                guard base == nil else { throw reader.failure("a key twice") }
                base = try Lane(reading: &reader)
            case "devices":
                guard devices == nil else { throw reader.failure("a key twice") }
                devices = try reader.dictionary { reader throws(JSONReaderError) in try Lane(reading: &reader) }
            default: throw reader.failure("unknown key \(key)")
            }
        }
        guard let devices else { throw reader.failure("a counter state without its devices") }
        self.init(base: base, devices: devices)
    }
}
