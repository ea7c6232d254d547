import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import StrataCloud
import StrataCloudWire

/// Sends one request of the wire format and turns the answer, or its absence, into a value or a
/// `CloudError`.
struct CloudServiceTransport: Sendable {
    let baseURL: String
    let token: @Sendable () async throws -> String
    let httpClient: HTTPClient
    let timeout: Duration
    let maximumResponseBytes: Int
    /// Shared by every request of the container: a refused token is forgotten there.
    let accounts = AccountMemory()

    /// `POST path` with `body`, decoding a `Response` from a 2xx answer.
    func post<Response: Decodable>(_ path: String, _ body: some Encodable, as _: Response.Type = Response.self) async throws -> Response {
        try await send(.POST, path, body: try Self.requestBody(body))
    }

    /// `PUT path` with `body`, decoding a `Response` from a 2xx answer.
    func put<Response: Decodable>(_ path: String, _ body: some Encodable, as _: Response.Type = Response.self) async throws -> Response {
        try await send(.PUT, path, body: try Self.requestBody(body))
    }

    /// A request's JSON body.
    ///
    /// - Throws: ``CloudServiceClientError/unencodableRequest(_:)`` for a body that does not encode.
    private static func requestBody(_ body: some Encodable) throws -> Data {
        do {
            return try CloudWire.encode(body)
        } catch {
            throw CloudServiceClientError.unencodableRequest("\(error)")
        }
    }

    /// `GET path`, decoding a `Response` from a 2xx answer; with `bearer`, sent with that token.
    func get<Response: Decodable>(_ path: String, bearer: String? = nil, as _: Response.Type = Response.self) async throws -> Response {
        try await send(.GET, path, body: nil, bearer: bearer)
    }

    /// The token the next request sends.
    ///
    /// - Throws: `CloudError.notAuthenticated` when the token provider has no token.
    func bearer() async throws -> String {
        do {
            return try await token()
        } catch {
            throw CloudError.notAuthenticated
        }
    }

    private func resolved(_ bearer: String?) async throws -> String {
        if let bearer { return bearer }
        return try await self.bearer()
    }

    /// A request with the user's bearer token (`bearer`, or the provider's).
    ///
    /// - Throws: `CloudError.notAuthenticated` when the token provider has no token.
    func request(_ method: HTTPMethod, _ path: String, bearer: String? = nil) async throws -> HTTPClientRequest {
        let bearer = try await resolved(bearer)
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: CloudWire.authorizationHeader, value: "Bearer \(bearer)")
        return request
    }

    /// `POST path` with `body`, answering a 2xx answer's body as it came: the caller reads it
    /// with ``decoded(_:from:)``.
    func postForBody(_ path: String, _ body: some Encodable) async throws -> Data {
        try await sendForBody(.POST, path, body: try Self.requestBody(body))
    }

    /// A 2xx answer's body read as `Response`.
    ///
    /// - Throws: `CloudError.networkFailure` for a body that is not JSON: cut or garbled on
    ///   the way, as good as lost, and worth asking again.
    ///   ``CloudServiceClientError/unexpectedResponse(status:message:)`` for JSON that is not a
    ///   `Response` (a record the service's store holds in a shape no client reads): asking
    ///   again gets the same answer, so it is never reported as temporary.
    static func decoded<Response: Decodable>(_: Response.Type, from bytes: Data) throws -> Response {
        do {
            return try CloudWire.decode(Response.self, from: bytes)
        } catch {
            guard (try? JSONSerialization.jsonObject(with: bytes, options: [.fragmentsAllowed])) != nil else {
                throw CloudError.networkFailure
            }
            throw CloudServiceClientError.unexpectedResponse(status: 200, message: "\(Response.self): \(error)")
        }
    }

    private func send<Response: Decodable>(
        _ method: HTTPMethod, _ path: String, body: Data?, bearer: String? = nil
    ) async throws -> Response {
        try Self.decoded(Response.self, from: try await sendForBody(method, path, body: body, bearer: bearer))
    }

    private func sendForBody(_ method: HTTPMethod, _ path: String, body: Data?, bearer: String? = nil) async throws -> Data {
        let bearer = try await resolved(bearer)
        var request = try await request(method, path, bearer: bearer)
        if let body {
            request.headers.add(name: "Content-Type", value: CloudWire.contentType)
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let (status, headers, bytes) = try await exchange(request)
        guard (200..<300).contains(status) else {
            let failure = Self.failure(status: status, headers: headers, body: bytes)
            if case CloudError.notAuthenticated? = failure as? CloudError { accounts.forget(token: bearer) }
            throw failure
        }
        return bytes
    }

    /// Runs the request and reads the whole answer; every failure to get one is a network
    /// failure, as the request may or may not have landed.
    private func exchange(_ request: HTTPClientRequest) async throws -> (Int, HTTPHeaders, Data) {
        do {
            let (seconds, attoseconds) = timeout.components
            let amount = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            let response = try await httpClient.execute(request, timeout: amount)
            let buffer = try await response.body.collect(upTo: maximumResponseBytes)
            return (Int(response.status.code), response.headers, Data(buffer.readableBytesView))
        } catch {
            if Task.isCancelled { throw CancellationError() }
            throw CloudError.networkFailure
        }
    }

    /// The error a non-2xx answer stands for: the cloud error of its body, else what its status
    /// means.
    static func failure(status: Int, headers: HTTPHeaders, body: Data) -> any Error {
        let retryAfter = headers.first(name: "Retry-After")
        if let response = try? CloudWire.makeDecoder().decode(ErrorResponse.self, from: body) {
            if response.error.code == InvalidRequest.code {
                return CloudServiceClientError.invalidRequest(
                    field: response.error.field ?? "", reason: response.error.reason ?? response.error.message ?? "")
            }
            if let error = try? response.error.cloudError() { return error }
            if let error = CloudErrorStatus.error(forStatus: status, retryAfter: retryAfter) { return error }
            return CloudServiceClientError.unexpectedResponse(status: status, message: response.error.message ?? response.error.code)
        }
        if let error = CloudErrorStatus.error(forStatus: status, retryAfter: retryAfter) { return error }
        // A 5xx without a body came from something in front of the service: retry later.
        if (500..<600).contains(status) { return CloudError.serviceUnavailable(retryAfter: nil) }
        return CloudServiceClientError.unexpectedResponse(status: status, message: String(decoding: body.prefix(512), as: UTF8.self))
    }
}
