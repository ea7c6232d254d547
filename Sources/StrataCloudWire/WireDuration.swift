/// A `Duration` as JSON, without losing precision: whole seconds and the attoseconds beyond them,
/// as `Duration.components` gives them.
public struct WireDuration: Codable, Sendable, Hashable {
    /// Whole seconds.
    public var seconds: Int64
    /// Attoseconds beyond ``seconds``.
    public var attoseconds: Int64

    /// The wire form of `duration`.
    public init(_ duration: Duration) {
        (seconds, attoseconds) = duration.components
    }

    /// The duration.
    public var duration: Duration {
        Duration(secondsComponent: seconds, attosecondsComponent: attoseconds)
    }
}
