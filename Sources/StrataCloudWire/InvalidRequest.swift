/// A request the service refuses for good: one field is out of its bounds or malformed.
///
/// It travels as `400` with the code ``code`` and the field in ``CloudErrorBody/field``.
/// Unlike `serviceUnavailable`, retrying the same request fails the same way: the client must
/// change what it sends.
public struct InvalidRequest: Error, Hashable, Sendable, CustomStringConvertible {
    /// The wire code of this error.
    public static let code = "invalidRequest"

    /// Where in the request the bad value is, as a path such as `saving[3].fields.title` or
    /// `limit`; `body` for a body that is not JSON at all.
    public var field: String
    /// What is wrong with it.
    public var reason: String

    /// An error naming `field` and why it was refused.
    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }

    /// `invalidRequest: <field>: <reason>`.
    public var description: String { "\(Self.code): \(field): \(reason)" }

    /// The body of the `400` answer.
    public var body: CloudErrorBody {
        CloudErrorBody(code: Self.code, message: description, field: field, reason: reason)
    }
}
