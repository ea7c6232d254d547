import Foundation
import Hummingbird
import StrataCloud
import StrataCloudWire

/// Builds the service's JSON responses.
enum CloudResponses {
    /// A 200 response with `value` as its JSON body.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try CloudWire.encode(value)
        var headers = HTTPFields()
        headers[.contentType] = CloudWire.contentType
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A 200 response whose JSON body is written already.
    static func json(bytes: [UInt8]) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = CloudWire.contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The response a client turns back into `error`: its status, `Retry-After` when the error
    /// asks for a delay, and the lossless ``ErrorResponse`` body.
    static func error(_ error: CloudError) -> Response {
        let status = HTTPResponse.Status(code: CloudErrorStatus.code(for: error))
        var response = (try? json(ErrorResponse(error), status: status)) ?? Response(status: status)
        if let retryAfter = CloudErrorStatus.retryAfterHeader(for: error) {
            response.headers[.retryAfter] = retryAfter
        }
        return response
    }

    /// A failure no ``CloudError`` describes, with the same `{"error": {...}}` shape: `400`
    /// `InvalidRequest`, `404` and `405` for routes the service does not
    /// have, `500` for its own faults (which a client must not retry blindly).
    static func failure(_ body: CloudErrorBody, status: HTTPResponse.Status) -> Response {
        (try? json(ErrorResponse(body: body), status: status)) ?? Response(status: status)
    }

    /// The `400` answer to `error`.
    static func invalid(_ error: InvalidRequest) -> Response {
        failure(error.body, status: .badRequest)
    }
}
