/// The version of one field edit: a hybrid logical clock reading.
///
/// Timestamps order by physical milliseconds, then by counter, then by node (the device id), so
/// two distinct edits never compare equal. The text form, `"milliseconds.counter@node"`, is what
/// the metadatabase and the cloud store; it round-trips through ``init(_:)``.
public struct HybridTimestamp: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Unix time in milliseconds: the largest physical time the issuing clock had seen.
    public var milliseconds: Int64
    /// Orders events that share ``milliseconds``.
    public var counter: UInt32
    /// The issuing device's id; the final tie-break.
    public var node: String

    /// A timestamp from its parts.
    public init(milliseconds: Int64, counter: UInt32, node: String) {
        self.milliseconds = milliseconds
        self.counter = counter
        self.node = node
    }

    /// Parses the text form `"milliseconds.counter@node"`; nil when `text` is not one.
    ///
    /// Strict, so that the wire format's pattern (`^-?[0-9]{1,18}\.[0-9]{1,9}@.+$`) and this
    /// parser accept the same texts: an optional minus, 1–18 digits of milliseconds (every
    /// value fits an `Int64`), 1–9 digits of counter (fits a `UInt32`), and a non-empty node.
    /// No `+` sign and no whitespace, which `Int64.init(_:)` alone would let through.
    public init?(_ text: some StringProtocol) {
        // On UTF-8 bytes, not Characters: "@" followed by a combining mark or an emoji
        // modifier is one Character that is not "@", and a node may start with either.
        let bytes = text.utf8
        guard let at = bytes.firstIndex(of: UInt8(ascii: "@")),
            let dot = bytes[..<at].firstIndex(of: UInt8(ascii: "."))
        else { return nil }
        var millisecondsDigits = bytes[..<dot]
        let negative = millisecondsDigits.first == UInt8(ascii: "-")
        if negative { millisecondsDigits = millisecondsDigits.dropFirst() }
        let counterDigits = bytes[bytes.index(after: dot)..<at]
        guard let magnitude = Self.number(millisecondsDigits, maximumDigits: 18),
            let counter = Self.number(counterDigits, maximumDigits: 9),
            bytes.index(after: at) != bytes.endIndex
        else { return nil }
        // Cut just after an ASCII byte, so the rest is whole UTF-8.
        let node = String(decoding: bytes[bytes.index(after: at)...], as: UTF8.self)
        self.init(milliseconds: negative ? -magnitude : magnitude, counter: UInt32(counter), node: node)
    }

    /// How many UTF-8 bytes ``description`` has, counted without writing it.
    package var descriptionLength: Int {
        func digits(_ magnitude: UInt64) -> Int {
            var count = 1
            var rest = magnitude / 10
            while rest > 0 {
                count += 1
                rest /= 10
            }
            return count
        }
        return (milliseconds < 0 ? 1 : 0) + digits(milliseconds.magnitude) + 1 + digits(UInt64(counter)) + 1 + node.utf8.count
    }

    /// 1 to `maximumDigits` ASCII digits (at most 18, so the value fits an `Int64`).
    private static func number(_ digits: some Collection<UInt8>, maximumDigits: Int) -> Int64? {
        guard !digits.isEmpty, digits.count <= maximumDigits else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(digit - UInt8(ascii: "0"))
        }
        return value
    }

    /// The longest text form the wire format carries, in characters (Unicode scalars, as JSON
    /// Schema's `maxLength` counts them).
    public static let maximumTextLength = 256

    /// Counters stay below this: a clock moves to the next millisecond instead (see
    /// `HybridLogicalClock` in StrataSync), so milliseconds and counter pack into one integer.
    public static let counterLimit: UInt32 = 1 << 20

    /// Milliseconds and counter as one integer that orders like them,
    /// `milliseconds << 20 | counter`; the node is left out. Positive for every millisecond
    /// before the year 2248.
    public var packedTime: Int64 {
        Self.packedTime(milliseconds: milliseconds, counter: min(counter, Self.counterLimit - 1))
    }

    package static func packedTime(milliseconds: Int64, counter: UInt32) -> Int64 {
        milliseconds << 20 | Int64(counter)
    }

    /// The timestamp of a ``packedTime`` issued by `node`.
    public init(packedTime: Int64, node: String) {
        self.init(milliseconds: packedTime >> 20, counter: UInt32(packedTime & Int64(Self.counterLimit - 1)), node: node)
    }

    /// The text form, `milliseconds.counter@node`.
    public var description: String { "\(milliseconds).\(counter)@\(node)" }

    /// Orders by milliseconds, then counter, then node.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.milliseconds != rhs.milliseconds { return lhs.milliseconds < rhs.milliseconds }
        if lhs.counter != rhs.counter { return lhs.counter < rhs.counter }
        return lhs.node < rhs.node
    }

    /// Encodes as the text form, so stored versions stay readable in SQL and JSON.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Decodes the text form; a malformed one throws `DecodingError.dataCorrupted`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard text.unicodeScalars.count <= Self.maximumTextLength else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "a hybrid timestamp of \(text.unicodeScalars.count) characters; at most \(Self.maximumTextLength)")
        }
        guard let timestamp = HybridTimestamp(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(text)\" is not a hybrid timestamp (milliseconds.counter@node)")
        }
        self = timestamp
    }
}
