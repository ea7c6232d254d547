import CSQLite

/// A SQL function that lets a key through only when it is text SQLite and Swift read alike:
/// `name(value, table, column)` is 1 when `value` is valid UTF-8 TEXT, and fails the statement
/// otherwise (a BLOB, a number, NULL, or TEXT whose bytes are not UTF-8), naming the table and
/// the column. It answers a flag, not the value, so a trigger's `WHEN` can call it without a
/// copy of the key.
///
/// Why it exists: SQLite stores TEXT as the bytes it was given and compares them as bytes, but
/// a Swift `String` made from bytes that are not UTF-8 replaces them with U+FFFD, so two keys
/// SQLite keeps apart could become one name, and a key read back no longer finds its row.
/// Capture triggers call it for every key a synced table gains, so it reads SQLite's value in
/// place (no `DatabaseValue`, no copy): an ASCII key costs a loop over its bytes.
extension Database {
    /// Installs `name(value, table, column)`.
    ///
    /// - Parameter skipped: when given and true at a call, the function answers 0 without
    ///   looking at the key: a capture trigger's `WHEN` then makes one call where it made two
    ///   (whether the engine is writing, and whether the key is text).
    package func addTextKeyGuard(named name: String, skippedWhen skipped: (@Sendable () -> Bool)? = nil) throws {
        confinement.check("Database.addTextKeyGuard(named:)")
        let box = skipped.map { Unmanaged.passRetained(TextKeyGuard.Skip($0)).toOpaque() }
        let code = sqlite3_create_function_v2(
            handle, name, 3, box == nil ? SQLITE_UTF8 | SQLITE_DETERMINISTIC : SQLITE_UTF8, box,
            { context, _, values in
                guard let context, let values, let value = values[0] else { return }
                if let skip = sqlite3_user_data(context),
                    Unmanaged<TextKeyGuard.Skip>.fromOpaque(skip)._withUnsafeGuaranteedRef({ $0.isSkipped() })
                {
                    sqlite3_result_int(context, 0)
                    return
                }
                if sqlite3_value_type(value) == SQLITE_TEXT, let text = sqlite3_value_text(value),
                    TextKeyGuard.isUTF8(UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))))
                {
                    sqlite3_result_int(context, 1)
                    return
                }
                let message = TextKeyGuard.refusal(value: value, table: values[1], column: values[2])
                sqlite3_result_error(context, message, -1)
            },
            nil, nil,
            { box in
                if let box { Unmanaged<TextKeyGuard.Skip>.fromOpaque(box).release() }
            })
        if code != SQLITE_OK {
            // SQLite calls the destructor itself when registration fails.
            throw DatabaseError(connection: handle, code: code, sql: "add function \(name)")
        }
    }
}

package enum TextKeyGuard {
    /// The condition under which a guard answers 0 without looking at the key.
    fileprivate final class Skip {
        let isSkipped: @Sendable () -> Bool
        init(_ isSkipped: @escaping @Sendable () -> Bool) { self.isSkipped = isSkipped }
    }

    /// Whether `bytes` are well-formed UTF-8 (no overlong forms, no surrogates, nothing past
    /// U+10FFFF), as Swift's `String(validating:)` accepts them.
    package static func isUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                upper = 0x9F
            case 0xF0:
                length = 4
                lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                upper = 0x8F
            default: return false
            }
            guard index + length <= count else { return false }
            let second = bytes[index + 1]
            guard second >= lower && second <= upper else { return false }
            for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return false }
            index += length
        }
        return true
    }

    static func refusal(value: OpaquePointer, table: OpaquePointer?, column: OpaquePointer?) -> String {
        func text(_ argument: OpaquePointer?) -> String {
            guard let argument, let bytes = sqlite3_value_text(argument) else { return "?" }
            return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(argument))), as: UTF8.self)
        }
        let what: String
        switch sqlite3_value_type(value) {
        case SQLITE_TEXT:
            let bytes = UnsafeBufferPointer(start: sqlite3_value_text(value), count: Int(sqlite3_value_bytes(value)))
            let hex = bytes.prefix(64).map { String($0, radix: 16, uppercase: true).leftPadded(to: 2) }.joined()
            what = "text that is not valid UTF-8 (bytes \(hex)\(bytes.count > 64 ? "…" : ""))"
        case SQLITE_BLOB: what = "a BLOB"
        case SQLITE_NULL: what = "NULL"
        default: what = "a number"
        }
        return "synced table \"\(text(table))\": primary key \"\(text(column))\" must hold valid UTF-8 text, not \(what)"
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
