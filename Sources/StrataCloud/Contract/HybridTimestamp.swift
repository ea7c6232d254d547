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
    public init?(_ text: some StringProtocol) {
        guard let at = text.firstIndex(of: "@"), let dot = text[..<at].firstIndex(of: ".") else { return nil }
        guard let milliseconds = Int64(text[..<dot]),
              let counter = UInt32(text[text.index(after: dot)..<at])
        else { return nil }
        let node = text[text.index(after: at)...]
        guard !node.isEmpty else { return nil }
        self.init(milliseconds: milliseconds, counter: counter, node: String(node))
    }

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
        guard let timestamp = HybridTimestamp(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(text)\" is not a hybrid timestamp (milliseconds.counter@node)")
        }
        self = timestamp
    }
}
