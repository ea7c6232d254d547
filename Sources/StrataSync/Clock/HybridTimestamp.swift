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
