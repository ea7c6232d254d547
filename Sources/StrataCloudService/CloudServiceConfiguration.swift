import Foundation
import Logging
import Prometheus
import StrataCloud

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

    /// The longest name accepted, in characters (Unicode scalars, as JSON Schema's `maxLength`
    /// counts them, so the OpenAPI document can state the bound exactly): users, zones,
    /// records, types, field names, change tags, share titles and participants. 256
    /// characters are at most 1 KiB of UTF-8; PostgreSQL indexes refuse keys past about 2.7 KB,
    /// and a record's key holds three names. CloudKit's record names stop at 255.
    public var maximumNameLength = 256
    /// The most records one page of a zone's changes holds: a larger `limit` gets pages of this
    /// size (with `moreComing`); a limit below 1 fails with `InvalidRequest` naming `limit`.
    public var maximumFetchPageSize = 2_000
    /// Zones in one `saveZones` or `deleteZones`.
    public var maximumZonesPerRequest = 100
    /// Participants in one `saveShare`.
    public var maximumParticipantsPerShare = 100
    /// Hashes in one `missingAssets`, assets in one `uploadAssets`.
    public var maximumHashesPerRequest = 1_000
    /// The uncompressed size of one uploaded asset, in bytes: bounds the work of checking its
    /// SHA-256 (a small deflated body can stand for a huge content).
    public var maximumAssetBytes: Int64 = 1 << 30
    /// Change streams (`GET /v1/changes`) one user may hold open at once; one more gets
    /// `requestRateLimited`.
    public var maximumChangeStreamsPerUser = 16
    /// The longest any request may take before the service answers it with
    /// `serviceUnavailable` (retry later), whatever the backend is doing: a request waiting on
    /// a lock, or on a database connection that died, still gets an answer.
    public var requestDeadline: Duration = .seconds(30)
    /// The time bearer tokens' expiry is checked against: the system's clock by default; a
    /// test sets a clock it moves itself, so an expired token needs no waiting.
    public var now: @Sendable () -> Date = { Date() }

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
