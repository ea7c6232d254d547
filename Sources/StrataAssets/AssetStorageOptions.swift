/// How new assets are chunked and compressed. Existing assets keep the settings they were
/// written with (each asset row records its chunk size and compression), so changing these
/// never makes old assets unreadable.
public struct AssetStorageOptions: Sendable, Hashable {
    /// Uncompressed bytes per chunk. Memory used by a put or a read is a small multiple of this,
    /// whatever the asset's size. 256 KiB by default: large enough that per-row and per-call
    /// overheads vanish next to compression, small enough to keep memory and SQLite's page
    /// cache churn low.
    public var chunkSize: Int = 256 * 1024
    /// The zlib level, 1 (fastest) to 9 (smallest); 6 by default, zlib's own default.
    /// 0 disables compression.
    public var compressionLevel: Int = 6
    /// Compression is kept only if the sample (the first chunk) shrinks by at least this
    /// fraction; 0.1 by default. Smaller savings do not repay inflating on every read.
    public var minimumSavings: Double = 0.1

    public init() {}

    public init(chunkSize: Int = 256 * 1024, compressionLevel: Int = 6, minimumSavings: Double = 0.1) {
        self.chunkSize = chunkSize
        self.compressionLevel = compressionLevel
        self.minimumSavings = minimumSavings
    }

    /// The largest chunk size new assets are written with. Readers reject any larger recorded
    /// chunk size as damage, before allocating a chunk buffer from it.
    // Capped so one chunk's deflate bound fits zlib's 32-bit counters.
    static let maximumChunkSize = 64 * 1024 * 1024

    /// The options with out-of-range values brought into range.
    var validated: AssetStorageOptions {
        var options = self
        options.chunkSize = min(max(chunkSize, 1024), Self.maximumChunkSize)
        options.compressionLevel = min(max(compressionLevel, 0), 9)
        options.minimumSavings = min(max(minimumSavings, 0), 1)
        return options
    }
}
