import Foundation

/// How a ``SyncEngine`` identifies itself, tells time and schedules its work.
public struct SyncEngineConfiguration: Sendable {
    /// This device's id; by default one is made once and kept in the metadatabase.
    public var deviceID: String?
    /// The current Unix time in milliseconds, for the hybrid logical clock.
    public var physicalTime: @Sendable () -> Int64
    /// The name of the zone records go to in the private database.
    public var zoneName: String
    /// The most records one modify request carries; halved on `limitExceeded`.
    public var batchSize: Int
    /// The most modify requests one send keeps travelling at once; 1 sends one at a time, and
    /// a smaller value counts as 1. Batches after the first go before its answer while none of
    /// their records is a parent or child of a record travelling, so the cloud may take them in
    /// any order; a batch holding a child waits for its parent's answer. On a network with a
    /// long round trip, a send then waits that round trip once for several batches, not once
    /// each: through a link of 80 ms, four in flight uploaded a first sync about 1.35 times as
    /// fast as two (Documentation/Performance.md); on loopback the two did the same.
    public var maximumBatchesInFlight: Int
    /// The most records one page of a zone's changes carries; a cloud may answer with smaller
    /// pages (the `strata-cloud` service serves at most its `--maximum-fetch-page-size`, 2,000
    /// by default). Each page is one request; its token names where the next one starts, and
    /// the cloud plans where the ones after that start, so the requests of the pages ahead
    /// travel together: through a link of 80 ms, pages of 2,000 fetched a first sync about 1.5
    /// times as fast as pages of 1,000 asked one after another, and planned starts about 1.35
    /// times as fast again (Documentation/Performance.md).
    /// Each page is also one write transaction on the device (about 25 µs a record), and up to
    /// three are held while the next ones are read: a device syncing a million records peaked at
    /// about 150 MB with pages of 2,000, 260 MB with pages of 4,000.
    public var fetchPageSize: Int
    /// Automatic work while running: nil syncs only when asked.
    public var schedule: SyncSchedule?
    /// A plain BLOB value larger than this travels as an asset (content by hash, beside the
    /// record) instead of inside the record, whose size the cloud limits.
    public var blobAssetThreshold: Int
    /// Whether `share(record:)` sends a record that has not reached the cloud yet before
    /// sharing it, instead of refusing: what previews want, where nothing waits for a tick.
    public var sendsBeforeSharing: Bool
    /// Whether records and assets are sealed on this device before they reach the cloud: end to
    /// end by default (see `Documentation/Encryption.md`).
    public var encryption: SyncEncryption
    /// How concurrent edits of particular columns merge (a counter, the app's own function);
    /// every other column keeps the default rule, last writer wins per field. Checked when the
    /// engine is created (``SyncSchemaError`` names the table and column). See ``MergePolicy``.
    public var mergePolicies: [MergePolicy]

    /// The configuration; every value has a default suited to a live app.
    public init(
        deviceID: String? = nil,
        physicalTime: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) },
        zoneName: String = "strata.default",
        batchSize: Int = 400,
        maximumBatchesInFlight: Int = 4,
        fetchPageSize: Int = 2_000,
        schedule: SyncSchedule? = SyncSchedule(),
        blobAssetThreshold: Int = 256 * 1024,
        sendsBeforeSharing: Bool = false,
        encryption: SyncEncryption = .endToEnd,
        mergePolicies: [MergePolicy] = []
    ) {
        self.encryption = encryption
        self.mergePolicies = mergePolicies
        self.blobAssetThreshold = blobAssetThreshold
        self.sendsBeforeSharing = sendsBeforeSharing
        self.deviceID = deviceID
        self.physicalTime = physicalTime
        self.zoneName = zoneName
        self.batchSize = batchSize
        self.maximumBatchesInFlight = maximumBatchesInFlight
        self.fetchPageSize = fetchPageSize
        self.schedule = schedule
    }
}

/// When a running engine sends and fetches on its own.
public struct SyncSchedule: Sendable {
    /// The clock the schedule sleeps on: inject a test clock to drive it.
    public var clock: any Clock<Duration>
    /// How long after a local commit the send starts, so a burst of commits goes in one send.
    public var sendDelay: Duration
    /// How often the engine fetches without a change hint.
    public var pollInterval: Duration
    /// The first retry delay after a transient failure; doubled up to ``maximumRetryDelay``,
    /// with jitter, and never shorter than the cloud's retry-after.
    public var initialRetryDelay: Duration
    /// The longest delay between retries.
    public var maximumRetryDelay: Duration

    /// A schedule; the defaults suit a live app (a send half a second after a commit, a fetch a minute).
    public init(
        clock: any Clock<Duration> = ContinuousClock(),
        sendDelay: Duration = .milliseconds(500),
        pollInterval: Duration = .seconds(60),
        initialRetryDelay: Duration = .seconds(1),
        maximumRetryDelay: Duration = .seconds(300)
    ) {
        self.clock = clock
        self.sendDelay = sendDelay
        self.pollInterval = pollInterval
        self.initialRetryDelay = initialRetryDelay
        self.maximumRetryDelay = maximumRetryDelay
    }
}
