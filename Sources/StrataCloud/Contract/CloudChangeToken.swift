/// A position in a change feed: give it back to fetch only what changed after it.
///
/// Opaque to clients; a cloud encodes what it needs (the mock cloud, a sequence number).
public struct CloudChangeToken: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The cloud's opaque text.
    public var value: String

    /// Wraps a token's text, as stored between launches.
    public init(_ value: String) {
        self.value = value
    }

    /// The text.
    public var description: String { value }
}
