/// Misuse of a connection or a pool: re-entrance, access after close, writing through a reader.
public struct DatabaseAccessError: Error, Sendable, CustomStringConvertible {
    /// The kinds of misuse.
    public enum Kind: Sendable, Hashable {
        /// A `read` or `write` was called from inside a closure already running on the same
        /// queue or pool; waiting would deadlock.
        case reentrantAccess
        /// The queue or pool was closed.
        case closed
        /// The database cannot be opened that way, such as a pool over a private in-memory
        /// database.
        case invalidLocation
    }

    /// What went wrong.
    public var kind: Kind
    /// What went wrong, naming the queue or pool and the method.
    public var message: String

    /// An error of this kind, with a message that names the database and the method.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
