/// A failure of the client's exchange with the service that no `CloudError` describes: the two
/// ends disagree about the wire format, which a retry does not fix.
public enum CloudServiceClientError: Error, Hashable, Sendable {
    /// The service refused the request as malformed, or answered with a status and body that
    /// are not part of the wire format.
    case unexpectedResponse(status: Int, message: String)
    /// A request body could not be encoded.
    case unencodableRequest(String)
    /// The service refused a field of the request for good (wire code `invalidRequest`): the
    /// field's path and why. Sending the same request again fails the same way.
    case invalidRequest(field: String, reason: String)
}
