import Hummingbird
import Logging
import Prometheus
import StrataCloud
import StrataCloudWire

extension CloudService {
    /// Every route the service serves, as registered: the label set of its metrics.
    static var routes: Set<String> {
        var routes: Set<String> = [
            CloudRoute.account, CloudRoute.acceptShare, CloudRoute.publishPublicKey, CloudRoute.publicKeys, CloudRoute.profile,
            CloudRoute.changes, CloudRoute.health, CloudRoute.metrics,
        ]
        for scope in [CloudDatabaseScope.private, .shared] {
            for operation in CloudOperation.allCases { routes.insert(CloudRoute.database(scope, operation)) }
        }
        return routes
    }

    /// Each route's methods: `GET` for the account, the change stream, health and metrics,
    /// `GET` and `PUT` for the profile, `POST` for the rest.
    static var routeMethods: [String: Set<HTTPRequest.Method>] {
        let gets: Set<String> = [CloudRoute.account, CloudRoute.changes, CloudRoute.health, CloudRoute.metrics]
        var methods: [String: Set<HTTPRequest.Method>] = Dictionary(
            uniqueKeysWithValues: routes.map { ($0, gets.contains($0) ? [HTTPRequest.Method.get] : [.post]) })
        methods[CloudRoute.profile] = [.get, .put]
        return methods
    }

    func makeRouter(verifier: TokenVerifier) -> Router<CloudRequestContext> {
        let router = Router(context: CloudRequestContext.self)
        router.add(
            middleware: ObservabilityMiddleware(
                routes: Self.routes, metricsFactory: PrometheusMetricsFactory(registry: configuration.metricsRegistry)))
        router.add(middleware: RouteFallbackMiddleware(methods: Self.routeMethods))
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
            await self.serve(
                context,
                prepare: {
                    let body = try await self.decode(AcceptShareRequest.self, from: request)
                    try RequestValidator(configuration: self.configuration).validate(body)
                    return { container in try CloudResponses.json(try await container.acceptShare(url: body.url)) }
                })
        }
        router.post(RouterPath(CloudRoute.publishPublicKey)) { request, context in
            await self.serve(
                context,
                prepare: {
                    let body = try await self.decode(PublishPublicKeyRequest.self, from: request)
                    try RequestValidator(configuration: self.configuration).validate(body)
                    return { container in
                        try await container.publishPublicKey(body.key)
                        return try CloudResponses.json(EmptyResponse())
                    }
                })
        }
        router.post(RouterPath(CloudRoute.publicKeys)) { request, context in
            await self.serve(
                context,
                prepare: {
                    let body = try await self.decode(PublicKeysRequest.self, from: request)
                    try RequestValidator(configuration: self.configuration).validate(body)
                    return { container in try CloudResponses.json(PublicKeysResponse(keys: try await container.publicKeys(of: body.users)))
                    }
                })
        }
        router.get(RouterPath(CloudRoute.profile)) { _, context in
            await self.serve(context) { container in
                try CloudResponses.json(UserProfileResponse(profile: try await container.userProfile()))
            }
        }
        router.put(RouterPath(CloudRoute.profile)) { request, context in
            await self.serve(
                context,
                prepare: {
                    let body = try await self.decode(CloudUserProfile.self, from: request)
                    try RequestValidator(configuration: self.configuration).validate(body)
                    return { container in
                        try await container.setUserProfile(body)
                        return try CloudResponses.json(EmptyResponse())
                    }
                })
        }
        router.get(RouterPath(CloudRoute.changes)) { _, context in
            let user = context.user ?? ""
            let logger = context.logger
            return await self.serve(context) { container in
                try self.changeStream(for: container, user: user, logger: logger)
            }
        }
        for scope in [CloudDatabaseScope.private, .shared] {
            for operation in CloudOperation.allCases {
                router.post(RouterPath(CloudRoute.database(scope, operation))) { request, context in
                    await self.serve(
                        context,
                        prepare: {
                            let work = try await self.prepare(operation, request: request)
                            return { container in
                                try await work(scope == .private ? container.privateDatabase : container.sharedDatabase)
                            }
                        })
                }
            }
        }
        return router
    }

    /// Runs an authenticated route with the user's container within the request deadline,
    /// turning every failure into the response a client decodes back into it.
    ///
    /// Only what is known to be temporary asks the client to retry (`serviceUnavailable`: the
    /// deadline passed, or the backend said so). Bad input is a permanent `400` naming the
    /// field; any other failure is a `500` `internalError`, never "retry later".
    func serve(_ context: CloudRequestContext, _ body: @escaping ContainerWork) async -> Response {
        await serve(context, prepare: { body })
    }

    /// The work of a route on the user's container.
    typealias ContainerWork = @Sendable (any CloudContainer) async throws -> Response

    /// ``serve(_:_:)`` for a route with a body: `prepare` reads, decodes and validates it (the
    /// client's pace, bounded by the body limit) and returns the work, which alone runs under
    /// the deadline. Work abandoned at the deadline therefore never holds the request body
    /// that the server reads on after answering.
    func serve(_ context: CloudRequestContext, prepare: () async throws -> ContainerWork) async -> Response {
        guard let user = context.user else { return CloudResponses.error(.notAuthenticated) }
        do {
            try RequestValidator(configuration: configuration).validate(user: user)
            let work = try await prepare()
            let backend = backend
            return try await Deadline.run(within: configuration.requestDeadline) { try await work(backend(user)) }
        } catch let error as CloudError {
            return CloudResponses.error(error)
        } catch let error as InvalidRequest {
            return CloudResponses.invalid(error)
        } catch let error as CloudUserProfileError {
            return CloudResponses.invalid(InvalidRequest(field: error.field, reason: error.reason))
        } catch let error as RequestRejection {
            return error.response
        } catch is DeadlineExceeded {
            context.logger.warning("request passed its deadline", metadata: ["deadline": "\(configuration.requestDeadline)"])
            return CloudResponses.error(.serviceUnavailable(retryAfter: .seconds(1)))
        } catch {
            context.logger.error("request failed", metadata: ["error": "\(error)"])
            return CloudResponses.failure(
                CloudErrorBody(code: "internalError", message: "the service failed; the request was not applied"),
                status: .internalServerError)
        }
    }

    private func changeStream(for container: any CloudContainer, user: String, logger: Logger) throws -> Response {
        guard let (id, ended) = changeStreams.open(user: user, limit: configuration.maximumChangeStreamsPerUser) else {
            throw CloudError.requestRateLimited(retryAfter: .seconds(5))
        }
        // Subscribe before the head goes out: a change landing after the client saw the head is
        // then never missed.
        let hints = container.changeHints()
        return ChangeStreamResponse.make(
            hints: hints, ended: ended, heartbeat: configuration.heartbeatInterval,
            onFinish: { [changeStreams] in changeStreams.remove(id) }, logger: logger)
    }
}
