import Foundation

/// Writes JSON byte by byte, for the record shapes that make up nearly all sync traffic.
///
/// `JSONEncoder` reaches every value through `Encodable`'s generic, boxed containers: profiled
/// on a first sync it took a fifth of the process's time, several times the cost of the bytes
/// themselves (Documentation/Performance.md, "Sync at real volumes"). What this writes decodes
/// with `JSONDecoder` to the same values; object keys are written sorted, so equal values give
/// equal bytes, as the `.sortedKeys` encoders they replace promised.
package struct JSONWriter {
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    /// How many bytes are written.
    package var count: Int { bytes.count }

    /// Writes again the bytes written at `range`: a value repeated is formatted once.
    package mutating func repeatBytes(at range: Range<Int>) {
        // One copy within the buffer, not an append per byte (a record's versions repeat one
        // timestamp of some 50 bytes per field). `append(contentsOf: bytes[range])` would copy
        // the whole buffer first: the slice shares it.
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: range.count))
        bytes.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            (base + start).update(from: base + range.lowerBound, count: range.count)
        }
    }

    /// The bytes written at `range`, as a `String`: a part of what was written, such as one
    /// value of an object.
    package func text(in range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }

    /// The bytes as `Data`.
    package var data: Data { Data(bytes) }

    /// The bytes as a `String` (they are UTF-8 by construction).
    package var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Syntax and keys, written as they are: `"name":`, `{`, `,`.
    package mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Bytes that are already JSON.
    package mutating func append(contentsOf json: Data) {
        bytes.append(contentsOf: json)
    }

    /// Text that is already JSON, written as it is.
    package mutating func json(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Text that is already JSON, written without the whitespace between its tokens (what
    /// PostgreSQL puts after every `:` and `,` of a `jsonb` value it writes out); strings are
    /// copied as they are.
    package mutating func compactJSON(_ text: String) {
        var text = text
        text.withUTF8 { input in
            // Runs between whitespace are copied whole: appending byte by byte checked the
            // array's capacity and uniqueness at every byte (8 % of the service's CPU in a
            // first sync's download, compacting every page's `jsonb` text).
            var inString = false
            var escaped = false
            var runStart = 0
            for (offset, byte) in input.enumerated() {
                if inString {
                    if escaped {
                        escaped = false
                    } else if byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        inString = false
                    }
                } else if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart..<offset]))
                    runStart = offset + 1
                } else if byte == UInt8(ascii: "\"") {
                    inString = true
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart...]))
        }
    }

    /// Bytes that are already JSON, written as they are.
    package mutating func json(bytes json: [UInt8]) {
        bytes.append(contentsOf: json)
    }

    /// A JSON string: quote, backslash and control characters escaped as `JSONEncoder` escapes
    /// them; `/` and every other character written as UTF-8.
    package mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        stringContents(value)
        bytes.append(UInt8(ascii: "\""))
    }

    /// The inside of a JSON string, escaped, without its quotes: for a string written in parts.
    package mutating func stringContents(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                escape(byte)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
    }

    /// Raw bytes already valid inside JSON (ASCII punctuation between parts of a string).
    package mutating func byte(_ ascii: Unicode.Scalar) {
        bytes.append(UInt8(ascii: ascii))
    }

    private mutating func escape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }

    package mutating func integer(_ value: Int64) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // Digits from the last, into a buffer on the stack, then appended at once: reversing
        // them in `bytes` through a slice copied the whole array (profiled: most of the cost
        // of writing a record's field versions).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var first = digits.count
            repeat {
                first -= 1
                digits.initializeElement(at: first, to: UInt8(ascii: "0") + UInt8(magnitude % 10))
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[first...]))
        }
    }

    /// A real; NaN and the infinities, which JSON has no literal for, as the strings `"NaN"`,
    /// `"+Infinity"` and `"-Infinity"` (the wire's and the stores' `nonConformingFloat` strategy).
    package mutating func real(_ value: Double) {
        if value.isNaN {
            raw("\"NaN\"")
        } else if value.isInfinite {
            raw(value < 0 ? "\"-Infinity\"" : "\"+Infinity\"")
        } else {
            bytes.append(contentsOf: value.description.utf8)
        }
    }

    package mutating func bool(_ value: Bool) {
        raw(value ? "true" : "false")
    }

    /// Bytes as a base64 string (the `.base64` data strategy).
    package mutating func base64(_ data: Data) {
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: data.base64EncodedData())
        bytes.append(UInt8(ascii: "\""))
    }

    /// An object of string keys, written in sorted key order.
    package mutating func object<Value>(_ dictionary: [String: Value], _ write: (inout JSONWriter, Value) -> Void) {
        bytes.append(UInt8(ascii: "{"))
        // The entries copied once to the stack, and their order sorted as small plain values
        // beside them (`KeyPosition`): sorting the entries themselves moved keys and values
        // through every comparison, each comparison reading both keys' bytes again, and the
        // sort was a tenth of a first sync's client CPU (Documentation/Performance.md).
        let capacity = dictionary.count
        withUnsafeTemporaryAllocation(of: (key: String, value: Value).self, capacity: capacity) { entries in
            withUnsafeTemporaryAllocation(of: KeyPosition.self, capacity: capacity) { positions in
                var count = 0
                for entry in dictionary {
                    entries.initializeElement(at: count, to: entry)
                    positions.initializeElement(at: count, to: KeyPosition(entry.key, at: count))
                    count += 1
                }
                let order = UnsafeMutableBufferPointer(rebasing: positions[0..<count])
                Self.sort(order) { entries[$0].key }
                for index in 0..<count {
                    if index > 0 { bytes.append(UInt8(ascii: ",")) }
                    let entry = entries[order[index].index]
                    string(entry.key)
                    bytes.append(UInt8(ascii: ":"))
                    write(&self, entry.value)
                }
                _ = order.deinitialize()
                _ = UnsafeMutableBufferPointer(rebasing: entries[0..<count]).deinitialize()
            }
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// A key's place among an object's entries, with its first eight bytes as one integer
    /// when they are ASCII: two such keys whose integers differ order as the integers do.
    struct KeyPosition {
        /// The first eight UTF-8 bytes, big-endian, zero after the key's end.
        var prefix: UInt64
        /// Whether ``prefix``'s bytes are all ASCII (a NUL counts), so it orders as the key.
        var isASCII: Bool
        var index: Int

        init(_ key: String, at index: Int) {
            var key = key
            (prefix, isASCII) = key.withUTF8 { utf8 in
                var prefix: UInt64 = 0
                var ascii = true
                for offset in 0..<8 {
                    let byte = offset < utf8.count ? utf8[offset] : 0
                    ascii = ascii && byte < 0x80
                    prefix = prefix << 8 | UInt64(byte)
                }
                return (prefix, ascii)
            }
            self.index = index
        }

        /// Whether this key sorts before `other` by ``keyOrder(_:_:)``: by the prefixes when
        /// they decide it, else by the keys (`key(index)`) themselves.
        ///
        /// Two ASCII prefixes that differ first differ at a byte both keys have, where ASCII
        /// orders as UTF-16 does, or where the shorter key ended (a zero) and the longer one
        /// goes on with a byte above zero, which is the order of a key before its extensions.
        /// Equal prefixes (a key ending where the other holds a NUL, or eight equal bytes)
        /// compare the keys.
        func precedes(_ other: KeyPosition, key: (Int) -> String) -> Bool {
            if isASCII && other.isASCII && prefix != other.prefix { return prefix < other.prefix }
            return JSONWriter.keyOrder(key(index), key(other.index))
        }
    }

    /// Sorts `positions` by their keys: by insertion for the few keys of a record, which
    /// moves 24-byte values and compares integers.
    static func sort(_ positions: UnsafeMutableBufferPointer<KeyPosition>, key: (Int) -> String) {
        guard positions.count > 16 else {
            for sorted in positions.indices.dropFirst() {
                let moving = positions[sorted]
                var slot = sorted
                while slot > 0 && moving.precedes(positions[slot - 1], key: key) {
                    positions[slot] = positions[slot - 1]
                    slot -= 1
                }
                positions[slot] = moving
            }
            return
        }
        var positions = positions
        positions.sort { $0.precedes($1, key: key) }
    }

    /// An array.
    package mutating func array<Element>(_ elements: some Sequence<Element>, _ write: (inout JSONWriter, Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        var first = true
        for element in elements {
            if !first { bytes.append(UInt8(ascii: ",")) }
            first = false
            write(&self, element)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A fixed order of keys (by UTF-16 code units, as `JSONEncoder`'s `.sortedKeys` sorts), so
    /// equal dictionaries write equal bytes.
    ///
    /// Compared on the UTF-8 bytes: going through `utf16` transcoded every key at every
    /// comparison, and sorting the keys of each record was a twentieth of a first sync's
    /// client CPU (Documentation/Performance.md).
    static func keyOrder(_ lhs: String, _ rhs: String) -> Bool {
        var (lhs, rhs) = (lhs, rhs)
        return lhs.withUTF8 { left in rhs.withUTF8 { right in utf16Precedes(left, right) } }
    }

    /// Whether UTF-8 text `left` sorts before `right` by UTF-16 code units. UTF-8's byte order
    /// is the order of scalars; UTF-16's differs only where a scalar above U+FFFF (a surrogate
    /// pair, from 0xD800) meets one in U+E000...U+FFFF.
    static func utf16Precedes(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
        let common = Swift.min(left.count, right.count)
        var index = 0
        while index < common && left[index] == right[index] { index += 1 }
        if index == common { return left.count < right.count }
        if left[index] < 0x80 && right[index] < 0x80 { return left[index] < right[index] }
        // The scalars that differ start where both texts still agree.
        var start = index
        while start > 0 && left[start] & 0xC0 == 0x80 { start -= 1 }
        let (a, b) = (scalar(in: left, at: start), scalar(in: right, at: start))
        let (keyA, keyB) = (firstUTF16Unit(of: a), firstUTF16Unit(of: b))
        return keyA == keyB ? a < b : keyA < keyB
    }

    /// The scalar whose valid UTF-8 encoding starts at `index`.
    private static func scalar(in bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt32 {
        let lead = UInt32(bytes[index])
        func continuation(_ offset: Int) -> UInt32 { UInt32(bytes[index + offset] & 0x3F) }
        if lead < 0x80 { return lead }
        if lead < 0xE0 { return (lead & 0x1F) << 6 | continuation(1) }
        if lead < 0xF0 { return (lead & 0x0F) << 12 | continuation(1) << 6 | continuation(2) }
        return (lead & 0x07) << 18 | continuation(1) << 12 | continuation(2) << 6 | continuation(3)
    }

    /// A scalar's first UTF-16 code unit: itself, or its high surrogate.
    private static func firstUTF16Unit(of scalar: UInt32) -> UInt32 {
        scalar < 0x10000 ? scalar : 0xD800 + ((scalar - 0x10000) >> 10)
    }
}
