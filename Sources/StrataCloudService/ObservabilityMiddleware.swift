import Hummingbird
import Logging
import Metrics

/// Counts and times every request by route and status, and logs one structured line per
/// request.
///
/// Routes are labelled by their registered path, never by the raw request path, so a client
/// probing random paths cannot blow up the number of metric series.
struct ObservabilityMiddleware: RouterMiddleware {
    typealias Context = CloudRequestContext

    let routes: Set<String>
    let metricsFactory: any MetricsFactory

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let route = routes.contains(request.uri.path) ? request.uri.path : "unmatched"
        let status: Int
        do {
            let response = try await next(request, context)
            status = response.status.code
            record(request, route: route, status: status, since: start, logger: context.logger)
            return response
        } catch let error as any HTTPResponseError {
            status = error.status.code
            record(request, route: route, status: status, since: start, logger: context.logger)
            throw error
        } catch {
            record(request, route: route, status: 500, since: start, logger: context.logger)
            throw error
        }
    }

    private func record(_ request: Request, route: String, status: Int, since start: ContinuousClock.Instant, logger: Logger) {
        let elapsed = ContinuousClock.now - start
        let dimensions = [("method", request.method.rawValue), ("route", route), ("status", String(status))]
        Counter(label: "strata_cloud_requests_total", dimensions: dimensions, factory: metricsFactory).increment()
        Metrics.Timer(label: "strata_cloud_request_duration_seconds", dimensions: dimensions, factory: metricsFactory)
            .recordNanoseconds(Self.nanoseconds(elapsed))
        // A change stream is logged when its head goes out: its duration is time to connect.
        logger.info(
            "request",
            metadata: [
                "method": .string(request.method.rawValue),
                "path": .string(request.uri.path),
                "route": .string(route),
                "status": .stringConvertible(status),
                "duration_ms": .stringConvertible(Self.nanoseconds(elapsed) / 1_000_000),
            ])
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
