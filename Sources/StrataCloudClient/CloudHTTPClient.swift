import AsyncHTTPClient

extension CloudServiceContainer {
    /// The HTTP client containers use unless given one: `HTTPClient.shared`'s configuration,
    /// with room for many connections to one service.
    ///
    /// Each open change stream (``changeHints()``) holds a connection for as long as it is
    /// open. `HTTPClient.shared` opens at most 8 HTTP/1.1 connections to one host and queues the
    /// rest, so with 8 streams open in a process (a server syncing for several users, a test
    /// with many devices) every other request to the service waited, silently and for ever.
    /// This client allows ``maximumConnectionsPerService``. Like `HTTPClient.shared` it lives as
    /// long as the process and is never shut down.
    public static let sharedHTTPClient: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = maximumConnectionsPerService
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// The connections ``sharedHTTPClient`` opens to one service at most: streams and requests
    /// together.
    public static let maximumConnectionsPerService = 1_024
}
