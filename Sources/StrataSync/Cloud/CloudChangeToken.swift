/// A position in a change feed: give it back to fetch only what changed after it.
///
/// Opaque to clients; a cloud encodes what it needs (the mock cloud, a sequence number).
public struct CloudChangeToken: Hashable, Sendable, Codable, CustomStringConvertible {
    public var value: String

    public init(_ value: String) {
        self.value = value
    }

    public var description: String { value }
}
