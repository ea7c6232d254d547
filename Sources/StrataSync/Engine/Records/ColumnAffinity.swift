/// SQLite's type affinity of a declared column type (section 3.1 of "Datatypes In SQLite"),
/// used to refuse an incoming value SQLite would store but the app could not decode.
enum ColumnAffinity {
    case integer, text, blob, real, numeric

    init(declaredType: String) {
        let type = declaredType.uppercased()
        if type.contains("INT") {
            self = .integer
        } else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") {
            self = .text
        } else if type.isEmpty || type.contains("BLOB") {
            self = .blob
        } else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") {
            self = .real
        } else {
            self = .numeric
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
