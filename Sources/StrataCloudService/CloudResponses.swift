import Foundation
import Hummingbird
import StrataCloudProtocol
import StrataSync

/// Builds the service's JSON responses.
enum CloudResponses {
    /// A 200 response with `value` as its JSON body.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let data = try CloudWire.makeEncoder().encode(value)
        var headers = HTTPFields()
        headers[.contentType] = CloudWire.contentType
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
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

    /// A 400 for a body that is not the operation's request: no cloud error fits, so the code
    /// is `badRequest`, which a client reports as a protocol error rather than a cloud one.
    static func badRequest(_ message: String) -> Response {
        let body = "{\"error\":{\"code\":\"badRequest\",\"message\":\(jsonString(message))}}"
        var headers = HTTPFields()
        headers[.contentType] = CloudWire.contentType
        return Response(status: .badRequest, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    private static func jsonString(_ text: String) -> String {
        (try? String(decoding: JSONEncoder().encode(text), as: UTF8.self)) ?? "\"\""
    }
}
