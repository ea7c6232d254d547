import Hummingbird
import Logging
import Prometheus
import StrataCloudProtocol
import StrataSync

extension CloudService {
    /// Every route the service serves, as registered: the label set of its metrics.
    static var routes: Set<String> {
        var routes: Set<String> = [CloudRoute.account, CloudRoute.acceptShare, CloudRoute.changes, CloudRoute.health, CloudRoute.metrics]
        for scope in [CloudDatabaseScope.private, .shared] {
            for operation in CloudOperation.allCases { routes.insert(CloudRoute.database(scope, operation)) }
        }
        return routes
    }

    func makeRouter(verifier: TokenVerifier) -> Router<CloudRequestContext> {
        let router = Router(context: CloudRequestContext.self)
        router.add(middleware: ObservabilityMiddleware(
            routes: Self.routes, metricsFactory: PrometheusMetricsFactory(registry: configuration.metricsRegistry)))
        router.add(middleware: AuthenticationMiddleware(verifier: verifier))

        router.get(RouterPath(CloudRoute.health)) { _, _ in
            try CloudResponses.json(HealthResponse())
        }
        router.get(RouterPath(CloudRoute.metrics)) { [configuration] _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            let text = configuration.metricsRegistry.emitToBuffer()
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
        }
        router.get(RouterPath(CloudRoute.account)) { _, context in
            await self.serve(context) { container in
                let status = try await container.accountStatus()
                let user = status == .available ? try await container.currentUser() : nil
                return try CloudResponses.json(AccountResponse(status: status, user: user))
            }
        }
        router.post(RouterPath(CloudRoute.acceptShare)) { request, context in
            await self.serve(context) { container in
                let body = try await self.decode(AcceptShareRequest.self, from: request)
                return try CloudResponses.json(try await container.acceptShare(url: body.url))
            }
        }
        router.get(RouterPath(CloudRoute.changes)) { _, context in
            await self.serve(context) { container in
                self.changeStream(for: container, logger: context.logger)
            }
        }
        for scope in [CloudDatabaseScope.private, .shared] {
            for operation in CloudOperation.allCases {
                router.post(RouterPath(CloudRoute.database(scope, operation))) { request, context in
                    await self.serve(context) { container in
                        let database = scope == .private ? container.privateDatabase : container.sharedDatabase
                        return try await self.perform(operation, on: database, request: request)
                    }
                }
            }
        }
        return router
    }

    /// Runs an authenticated route with the user's container, turning every failure into the
    /// response a client decodes back into it.
    func serve(_ context: CloudRequestContext, _ body: (any CloudContainer) async throws -> Response) async -> Response {
        guard let user = context.user else { return CloudResponses.error(.notAuthenticated) }
        do {
            return try await body(backend(user))
        } catch let error as CloudError {
            return CloudResponses.error(error)
        } catch let error as RequestRejection {
            return error.response
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)"])
            return CloudResponses.error(.serviceUnavailable(retryAfter: nil))
        }
    }

    private func changeStream(for container: any CloudContainer, logger: Logger) -> Response {
        // Subscribe before the head goes out: a change landing after the client saw the head is
        // then never missed.
        let hints = container.changeHints()
        let (id, ended) = changeStreams.open()
        return ChangeStreamResponse.make(
            hints: hints, ended: ended, heartbeat: configuration.heartbeatInterval,
            onFinish: { [changeStreams] in changeStreams.remove(id) }, logger: logger)
    }
}
