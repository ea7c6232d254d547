import Logging
import Prometheus
import StrataSync

/// How a ``CloudService`` listens, authenticates and limits requests.
public struct CloudServiceConfiguration: Sendable {
    /// The address to bind, such as `127.0.0.1` or `0.0.0.0`.
    public var host: String
    /// The port to bind; 0 picks a free one (read it with ``CloudService/listeningPort()``).
    public var port: Int
    /// The HMAC secret of the HS256 bearer tokens the service accepts.
    public var jwtKey: String
    /// What one request may carry: items per fetch or modify, and saved-record bytes.
    public var limits: CloudLimits
    /// The largest request body accepted, in bytes; larger bodies fail with
    /// `CloudError.limitExceeded` before they are decoded.
    public var maximumBodyBytes: Int
    /// The largest single record accepted (`CloudRecord.encodedSize`), in bytes.
    public var maximumRecordBytes: Int
    /// How often an idle change stream sends a heartbeat comment, so clients and proxies see a
    /// live connection and a dead one gets noticed.
    public var heartbeatInterval: Duration
    /// Where the service's request counters and timers live; `/metrics` exposes it. Passed in
    /// rather than bootstrapped globally, so the host decides what else shares it.
    public var metricsRegistry: PrometheusCollectorRegistry
    /// The logger of the service and its request log.
    public var logger: Logger

    /// A configuration; the defaults suit a local development server.
    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        jwtKey: String,
        limits: CloudLimits = CloudLimits(),
        maximumBodyBytes: Int = 64 * 1024 * 1024,
        maximumRecordBytes: Int = 1_000_000,
        heartbeatInterval: Duration = .seconds(15),
        metricsRegistry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        logger: Logger = Logger(label: "strata.cloud.service")
    ) {
        self.host = host
        self.port = port
        self.jwtKey = jwtKey
        self.limits = limits
        self.maximumBodyBytes = maximumBodyBytes
        self.maximumRecordBytes = maximumRecordBytes
        self.heartbeatInterval = heartbeatInterval
        self.metricsRegistry = metricsRegistry
        self.logger = logger
    }
}
