/// SQLite's type affinity of a declared column type (section 3.1 of "Datatypes In SQLite"),
/// used to refuse an incoming value SQLite would store but the app could not decode.
enum ColumnAffinity: Sendable, Hashable {
    case integer, text, blob, real, numeric

    init(declaredType: String) {
        // Byte comparisons, not `uppercased()` and Foundation's `contains`: this runs for every
        // column of every incoming record.
        let type = Array(declaredType.utf8)
        func has(_ word: StaticString) -> Bool { Self.contains(type, word) }
        if has("INT") {
            self = .integer
        } else if has("CHAR") || has("CLOB") || has("TEXT") {
            self = .text
        } else if type.isEmpty || has("BLOB") {
            self = .blob
        } else if has("REAL") || has("FLOA") || has("DOUB") {
            self = .real
        } else {
            self = .numeric
        }
    }

    /// Whether `text` holds `word` (uppercase ASCII), ignoring ASCII case.
    private static func contains(_ text: [UInt8], _ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard text.count >= count else { return false }
        return word.withUTF8Buffer { needle in
            (0...(text.count - count)).contains { start in
                (0..<count).allSatisfy { offset in
                    let byte = text[start + offset]
                    let upper = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 32 : byte
                    return upper == needle[offset]
                }
            }
        }
    }

    /// Why `value` does not belong in a column of this affinity, or nil when it does.
    func mismatch(_ value: CloudValue) -> String? {
        switch (self, value) {
        case (_, .null), (.blob, _): nil
        case (.integer, .integer), (.real, .integer), (.real, .real), (.numeric, .integer), (.numeric, .real): nil
        case (.integer, .real(let real)) where real.rounded() == real: nil
        case (.text, .text), (.text, .asset): nil
        case (.integer, _), (.real, _), (.numeric, _): "expected a number, got \(value.kindName)"
        case (.text, _): "expected text, got \(value.kindName)"
        }
    }
}

extension CloudValue {
    var kindName: String {
        switch self {
        case .null: "null"
        case .integer: "an integer"
        case .real: "a real"
        case .text: "text"
        case .bytes: "bytes"
        case .asset: "an asset"
        }
    }
}
