import Foundation

extension DatabaseValue {
    /// The value as a SQL literal: `NULL`, `42`, `1.5`, `'it''s'`, `X'00FF'`. For statements
    /// SQLite cannot bind, such as view definitions and trigger bodies.
    package var sqlLiteral: String {
        switch self {
        case .null:
            return "NULL"
        case .integer(let value):
            return String(value)
        case .real(let value):
            if value.isNaN { return "NULL" }
            if value.isInfinite { return value > 0 ? "9e999" : "-9e999" }
            return "\(value)"
        case .text(let text):
            return text.quotedSQLLiteral
        case .blob(let data):
            return Self.blobLiteral(data)
        }
    }

    /// `X'00FF'`: the bytes as a hexadecimal blob literal.
    static func blobLiteral(_ bytes: some Collection<UInt8>) -> String {
        let digits = Array("0123456789ABCDEF")
        var hex = "X'"
        hex.reserveCapacity(bytes.count * 2 + 3)
        for byte in bytes {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return hex + "'"
    }
}
