import Hummingbird
import StrataCloud
import StrataCloudWire

/// Authenticates every `/v1` request with its bearer token before any route runs, so a request
/// without a valid token never reaches the backend.
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = CloudRequestContext

    let verifier: TokenVerifier

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard path == CloudRoute.apiPrefix || path.hasPrefix(CloudRoute.apiPrefix + "/") else {
            return try await next(request, context)
        }
        guard let user = await verifier.user(authorization: request.headers[.authorization]) else {
            var response = CloudResponses.error(.notAuthenticated)
            response.headers[.wwwAuthenticate] = "Bearer"
            return response
        }
        var context = context
        context.user = user
        context.logger[metadataKey: "user"] = .string(user)
        return try await next(request, context)
    }
}
