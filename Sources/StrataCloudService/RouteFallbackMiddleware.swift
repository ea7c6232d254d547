import Hummingbird
import StrataCloudWire

/// Answers requests no route serves with the JSON error body the API document promises:
/// `405` (with `Allow`) for a known path asked with another method, or for `TRACE` anywhere;
/// `404` for an unknown path. Runs before authentication, so probing reveals nothing more
/// with a token than without.
struct RouteFallbackMiddleware: RouterMiddleware {
    typealias Context = CloudRequestContext

    /// Each route's methods.
    let methods: [String: Set<HTTPRequest.Method>]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if let allowed = methods[path], !allowed.contains(request.method), !(allowed.contains(.get) && request.method == .head) {
            return Self.methodNotAllowed(allowed: allowed.sorted { $0.rawValue < $1.rawValue })
        }
        if request.method == .trace { return Self.methodNotAllowed(allowed: []) }
        if methods[path] == nil { return Self.notFound(path) }
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            return Self.notFound(path)
        } catch let error as HTTPError where error.status == .methodNotAllowed {
            return Self.methodNotAllowed(allowed: [])
        }
    }

    static func notFound(_ path: String) -> Response {
        CloudResponses.failure(CloudErrorBody(code: "notFound", message: "no route \(path.prefix(200))"), status: .notFound)
    }

    static func methodNotAllowed(allowed: [HTTPRequest.Method]) -> Response {
        var response = CloudResponses.failure(
            CloudErrorBody(code: "methodNotAllowed", message: "the method is not allowed here"), status: .methodNotAllowed)
        response.headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ")
        return response
    }
}
