import Foundation

/// Why ``JSONReader`` stopped: the text is not exactly the shape the fast path reads.
///
/// Never shown to users: a caller that gets one decodes the same bytes again with
/// `JSONDecoder`, whose answer (a value, or an error naming the coding path) is the one that
/// counts (``FastJSON``).
package struct JSONReaderError: Error, CustomStringConvertible {
    package var offset: Int
    package var reason: String
    package var description: String { "at byte \(offset): \(reason)" }
}

/// Reads JSON byte by byte, strictly: only what the shapes it is asked for allow, in the
/// grammar of RFC 8259. Anything else (an unknown or repeated key, a number with a fraction
/// where an integer goes, a lone surrogate, invalid UTF-8) throws ``JSONReaderError``, so a
/// value read here is always the value `JSONDecoder` would read; the reverse need not hold.
package struct JSONReader {
    private let bytes: [UInt8]
    private var index = 0
    /// How many object keys read so far were spelled with an escape (`"ti\u0074le"`):
    /// legal JSON that SQLite's `json_extract` does not match against a path's key.
    package private(set) var escapedKeyCount = 0

    package init(_ data: Data) {
        bytes = [UInt8](data)
    }

    package init(_ text: String) {
        bytes = Array(text.utf8)
    }

    package func failure(_ reason: String) -> JSONReaderError {
        JSONReaderError(offset: index, reason: reason)
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func next() throws(JSONReaderError) -> UInt8 {
        skipSpace()
        guard index < bytes.count else { throw failure("unexpected end") }
        return bytes[index]
    }

    private mutating func expect(_ byte: UInt8) throws(JSONReaderError) {
        guard try next() == byte else { throw failure("expected \(Character(Unicode.Scalar(byte)))") }
        index += 1
    }

    /// Where the next value starts in the input, in bytes: whitespace before it is skipped.
    package mutating func valueStart() -> Int {
        skipSpace()
        return index
    }

    /// How many bytes of the input the reader has read.
    package var consumedCount: Int { index }

    /// Only whitespace is left.
    package mutating func end() throws(JSONReaderError) {
        skipSpace()
        guard index == bytes.count else { throw failure("text after the value") }
    }

    /// Consumes `null` when it comes next.
    package mutating func consumeNull() throws(JSONReaderError) -> Bool {
        guard try next() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    private mutating func literal(_ word: StaticString) throws(JSONReaderError) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("unexpected end") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw failure("expected \(word)")
        }
        index += count
    }

    package mutating func bool() throws(JSONReaderError) -> Bool {
        if try next() == UInt8(ascii: "t") {
            try literal("true")
            return true
        }
        try literal("false")
        return false
    }

    /// An object: `body` reads each key's value, and throws for a key it already read (a set
    /// of keys per object cost more than the rest of reading a record's fields).
    package mutating func object(_ body: (inout JSONReader, String) throws(JSONReaderError) -> Void) throws(JSONReaderError) {
        try expect(UInt8(ascii: "{"))
        if try next() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipSpace()
            let keyStart = index
            let key = try string()
            // An escape always spells a key in more bytes than it has.
            if index - keyStart - 2 != key.utf8.count { escapedKeyCount += 1 }
            try expect(UInt8(ascii: ":"))
            try body(&self, key)
            let separator = try next()
            index += 1
            if separator == UInt8(ascii: "}") { return }
            guard separator == UInt8(ascii: ",") else { throw failure("expected , or }") }
        }
    }

    /// Passes over the next value without reading it: checked against JSON's grammar (its
    /// structure, strings' escapes and control characters, numbers, literals) but not read
    /// into values, and its UTF-8 not checked. Whatever uses the value reads the same bytes
    /// again, strictly.
    package mutating func skipValue() throws(JSONReaderError) {
        _ = try next()
        let start = index
        guard let end = bytes.withUnsafeBufferPointer({ Self.endOfValue(in: $0, from: start) }) else {
            throw failure("not a JSON value")
        }
        index = end
    }

    /// Passes over an array, as ``skipValue()`` passes over any value.
    package mutating func skipArray() throws(JSONReaderError) {
        guard try next() == UInt8(ascii: "[") else { throw failure("expected [") }
        try skipValue()
    }

    /// The most containers ``skipValue()`` walks into, one inside another.
    static let maximumSkippedDepth = 512

    /// Where the JSON value at `start` ends, or nil when the bytes there are not one. A loop
    /// with a stack of the containers it is in, so no input can run the call stack out.
    ///
    /// A page's records are most of a page: walked with unchecked reads (skipping a page's
    /// records with checked reads was a tenth of reading them).
    private static func endOfValue(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = start
        var inObject: [Bool] = []
        while true {
            // A value starts here.
            skipSpace(bytes, &index)
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                skipSpace(bytes, &index)
                if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
                    index += 1
                } else {
                    guard inObject.count < maximumSkippedDepth, key(bytes, &index) else { return nil }
                    inObject.append(true)
                    continue
                }
            case UInt8(ascii: "["):
                index += 1
                skipSpace(bytes, &index)
                if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
                    index += 1
                } else {
                    guard inObject.count < maximumSkippedDepth else { return nil }
                    inObject.append(false)
                    continue
                }
            case UInt8(ascii: "\""):
                guard skipString(bytes, &index) else { return nil }
            case UInt8(ascii: "t"):
                guard skipLiteral("true", bytes, &index) else { return nil }
            case UInt8(ascii: "f"):
                guard skipLiteral("false", bytes, &index) else { return nil }
            case UInt8(ascii: "n"):
                guard skipLiteral("null", bytes, &index) else { return nil }
            default:
                guard skipNumber(bytes, &index) else { return nil }
            }
            // A value ended: close the containers it ends, or go on to the next value.
            while true {
                guard let object = inObject.last else { return index }
                skipSpace(bytes, &index)
                guard index < bytes.count else { return nil }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                    if object { guard key(bytes, &index) else { return nil } }
                    break
                }
                guard bytes[index] == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return nil }
                index += 1
                inObject.removeLast()
            }
        }
    }

    private static func skipSpace(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// An object's key and its colon.
    private static func key(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool {
        skipSpace(bytes, &index)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), skipString(bytes, &index) else { return false }
        skipSpace(bytes, &index)
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
        index += 1
        return true
    }

    private static func skipString(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool {
        index += 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return true
            }
            if byte < 0x20 { return false }
            if byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                UInt8(ascii: "r"), UInt8(ascii: "t"):
                index += 1
            case UInt8(ascii: "u"):
                guard index + 4 < bytes.count else { return false }
                for offset in 1...4 where !isHexDigit(bytes[index + offset]) { return false }
                index += 5
            default:
                return false
            }
        }
        return false
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    private static func skipLiteral(_ word: StaticString, _ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let matches = word.withUTF8Buffer { literal in (0..<count).allSatisfy { bytes[index + $0] == literal[$0] } }
        guard matches else { return false }
        index += count
        return true
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private static func skipNumber(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool {
        func isDigit(_ at: Int) -> Bool { at < bytes.count && bytes[at] >= UInt8(ascii: "0") && bytes[at] <= UInt8(ascii: "9") }
        func digits() -> Bool {
            guard isDigit(index) else { return false }
            while isDigit(index) { index += 1 }
            return true
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: "-") { index += 1 }
        if index < bytes.count && bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            guard digits() else { return false }
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() else { return false }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) { index += 1 }
            guard digits() else { return false }
        }
        return true
    }

    /// An object of string keys to values `value` reads.
    ///
    /// - Parameter capacity: how many keys to make room for before the first: a record's
    ///   fields and versions grew the dictionary four times on the way to ten keys.
    package mutating func dictionary<Value>(
        capacity: Int = 0, _ value: (inout JSONReader) throws(JSONReaderError) -> Value
    ) throws(JSONReaderError) -> [String: Value] {
        var result: [String: Value] = [:]
        result.reserveCapacity(capacity)
        try object { reader, key throws(JSONReaderError) in
            guard result.updateValue(try value(&reader), forKey: key) == nil else { throw reader.failure("the key \(key) twice") }
        }
        return result
    }

    /// An array of elements `element` reads.
    package mutating func array<Element>(
        _ element: (inout JSONReader) throws(JSONReaderError) -> Element
    ) throws(JSONReaderError) -> [Element] {
        try expect(UInt8(ascii: "["))
        var result: [Element] = []
        if try next() == UInt8(ascii: "]") {
            index += 1
            return result
        }
        while true {
            result.append(try element(&self))
            let separator = try next()
            index += 1
            if separator == UInt8(ascii: "]") { return result }
            guard separator == UInt8(ascii: ",") else { throw failure("expected , or ]") }
        }
    }

    /// A string, its escapes resolved; invalid UTF-8 and lone surrogates throw.
    package mutating func string() throws(JSONReaderError) -> String {
        try expect(UInt8(ascii: "\""))
        let start = index
        let scan = scanString(from: start)
        switch scan {
        case .plain(let end, let isASCII):
            index = end + 1
            return try text(start..<end, isASCII: isASCII)
        case .escape(let at):
            index = at
            return try escapedString(from: start)
        case .controlCharacter, .unterminated:
            throw failure(of: scan)
        }
    }

    /// Reads a string that holds no escape and returns where its bytes are in the input, to
    /// compare with ``sameBytes(_:_:)`` before making a `String` of them with ``text(_:)``.
    /// Nil, with the reader left where it was, for a string with an escape: read it with
    /// ``string()``.
    package mutating func plainString() throws(JSONReaderError) -> Range<Int>? {
        let before = index
        try expect(UInt8(ascii: "\""))
        let start = index
        let scan = scanString(from: start)
        switch scan {
        case .plain(let end, _):
            index = end + 1
            return start..<end
        case .escape:
            index = before
            return nil
        case .controlCharacter, .unterminated:
            throw failure(of: scan)
        }
    }

    /// Why a string whose scan ended at a control character or at the input's end is not one,
    /// with the reader moved to the byte at fault (the input's end for any other scan, which
    /// never comes here).
    private mutating func failure(of scan: StringScan) -> JSONReaderError {
        switch scan {
        case .controlCharacter(let at):
            index = at
            return failure("a control character in a string")
        case .plain, .escape, .unterminated:
            index = bytes.count
            return failure("unterminated string")
        }
    }

    /// Where a string's bytes end, and how.
    private enum StringScan {
        /// At the closing quote at `end`, with no escape before it; `isASCII` when every byte
        /// before it was.
        case plain(end: Int, isASCII: Bool)
        /// At a backslash at `at`.
        case escape(at: Int)
        /// At a byte below 0x20 at `at`, which JSON allows in a string only escaped.
        case controlCharacter(at: Int)
        /// Nowhere: the input ends first.
        case unterminated
    }

    /// Walks a string's bytes from `start`, just after its opening quote, with unchecked reads,
    /// to the first byte that is not an ordinary one, noting whether they were all ASCII on the
    /// way. Checked reads of the reader's array, a byte at a time through its stored index,
    /// and an `ArraySlice` of the bytes to make the `String` (a retain and a release of the
    /// input each), were a fifth of reading a page of records (the `wire` workload of
    /// `strata-bench`).
    ///
    /// Eight bytes at a time while none of them is a quote, a backslash, a control character
    /// or beyond ASCII (a word's bytes tested together, as in `memchr`); byte by byte from the
    /// first word that holds one.
    private func scanString(from start: Int) -> StringScan {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return .unterminated }
            var position = start
            var combined: UInt8 = 0
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while position + 8 <= buffer.count {
                let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
                // A byte of `x` is zero (or, for `x - ones * 0x20`, below 0x20) where its high
                // bit is set in `(x - ones * n) & ~x & highs`, provided no byte of `word` is 0x80
                // or above, which `word & highs` rules out first.
                let quotes = word ^ (ones &* 0x22)
                let backslashes = word ^ (ones &* 0x5C)
                let special =
                    (word & highs)
                    | ((quotes &- ones) & ~quotes & highs)
                    | ((backslashes &- ones) & ~backslashes & highs)
                    | ((word &- ones &* 0x20) & ~word & highs)
                if special != 0 { break }
                position += 8
            }
            while position < buffer.count {
                let byte = base[position]
                if byte == UInt8(ascii: "\"") { return .plain(end: position, isASCII: combined < 0x80) }
                if byte == UInt8(ascii: "\\") { return .escape(at: position) }
                if byte < 0x20 { return .controlCharacter(at: position) }
                combined |= byte
                position += 1
            }
            return .unterminated
        }
    }

    /// Whether two ranges of the input hold the same bytes.
    ///
    /// One `memcmp`: `elementsEqual` on two slices went a byte at a time through the
    /// collection protocol, and comparing each version of a record with the one before was
    /// 8 % of the service's CPU in a first sync.
    package func sameBytes(_ first: Range<Int>, _ second: Range<Int>) -> Bool {
        guard first.count == second.count else { return false }
        guard !first.isEmpty else { return true }
        return bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            return memcmp(base + first.lowerBound, base + second.lowerBound, first.count) == 0
        }
    }

    /// The text of a range ``plainString()`` returned, or of a value read between
    /// ``valueStart()`` and ``consumedCount``, checked to be UTF-8.
    package func text(_ range: Range<Int>) throws(JSONReaderError) -> String {
        try text(range, isASCII: false)
    }

    /// The text of `range`; `isASCII` when its bytes are known to be ASCII already, so they
    /// are not checked again for UTF-8.
    private func text(_ range: Range<Int>, isASCII: Bool) throws(JSONReaderError) -> String {
        let text = bytes.withUnsafeBufferPointer { buffer -> String? in
            let utf8 = UnsafeBufferPointer(rebasing: buffer[range])
            return isASCII ? String(decoding: utf8, as: UTF8.self) : Self.validated(utf8)
        }
        guard let text else { throw failure("invalid UTF-8") }
        return text
    }

    /// The text of `utf8`; invalid UTF-8 throws.
    ///
    /// ASCII, which most JSON text is, is read without `String(validating:as:)`: that
    /// initializer is generic and runs unspecialized here, looking up generic metadata at every
    /// call (5 % of the service's CPU in a first sync's upload, most of it decoding requests).
    private func validated(_ utf8: ArraySlice<UInt8>) throws(JSONReaderError) -> String {
        guard let text = utf8.withUnsafeBufferPointer(Self.validated) else { throw failure("invalid UTF-8") }
        return text
    }

    /// The text of `buffer`, nil when it is not UTF-8.
    private static func validated(_ buffer: UnsafeBufferPointer<UInt8>) -> String? {
        var combined: UInt8 = 0
        for byte in buffer { combined |= byte }
        if combined < 0x80 { return String(decoding: buffer, as: UTF8.self) }
        return String(validating: buffer, as: UTF8.self)
    }

    private mutating func escapedString(from start: Int) throws(JSONReaderError) -> String {
        var utf8 = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return try validated(utf8[...])
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw failure("unterminated string") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): utf8.append(contentsOf: try unicodeEscape())
                default: throw failure("unknown escape")
                }
            default:
                guard byte >= 0x20 else { throw failure("a control character in a string") }
                utf8.append(byte)
            }
        }
        throw failure("unterminated string")
    }

    /// The scalar of `\uXXXX` (the `\u` read), a surrogate pair taking a second escape.
    private mutating func unicodeEscape() throws(JSONReaderError) -> String.UTF8View {
        let first = try hexQuad()
        var value = UInt32(first)
        if (0xD800..<0xDC00).contains(first) {
            guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("a lone surrogate")
            }
            index += 2
            let second = try hexQuad()
            guard (0xDC00..<0xE000).contains(second) else { throw failure("a lone surrogate") }
            value = 0x10000 + ((UInt32(first) - 0xD800) << 10) + (UInt32(second) - 0xDC00)
        } else if (0xDC00..<0xE000).contains(first) {
            throw failure("a lone surrogate")
        }
        guard let scalar = Unicode.Scalar(value) else { throw failure("not a Unicode scalar") }
        return String(Character(scalar)).utf8
    }

    private mutating func hexQuad() throws(JSONReaderError) -> UInt16 {
        guard index + 4 <= bytes.count else { throw failure("unterminated escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("not a hex digit")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    /// An integer written as one: no fraction, no exponent, within `Int64`.
    package mutating func integer() throws(JSONReaderError) -> Int64 {
        _ = try next()
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let start = index
        var value: Int64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let digit = Int64(bytes[index] - UInt8(ascii: "0"))
            // Accumulated negatively, so Int64.min fits.
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.subtractingReportingOverflow(digit)
            guard !overflow, !overflow2 else { throw failure("an integer out of range") }
            value = sum
            index += 1
        }
        guard index > start, bytes[start] != UInt8(ascii: "0") || index == start + 1 else { throw failure("not an integer") }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) {
            throw failure("not an integer")
        }
        if negative { return value }
        guard value != .min else { throw failure("an integer out of range") }
        return -value
    }

    /// A finite number, or one of the strings `"NaN"`, `"+Infinity"`, `"-Infinity"`.
    package mutating func real() throws(JSONReaderError) -> Double {
        if try next() == UInt8(ascii: "\"") {
            switch try string() {
            case "NaN": return .nan
            case "+Infinity": return .infinity
            case "-Infinity": return -.infinity
            default: throw failure("a string where a number goes")
            }
        }
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { throw failure("not a number") }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw failure("not a number") }
        }
        let mantissaEnd = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("not a number") }
        }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.isFinite else {
            throw failure("a number out of range")
        }
        // `JSONDecoder` refuses a nonzero literal too small for a Double, rather than read 0.
        if value == 0, bytes[start..<mantissaEnd].contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }) {
            throw failure("a number out of range")
        }
        return value
    }

    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }
}
