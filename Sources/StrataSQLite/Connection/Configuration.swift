/// How a ``DatabaseQueue`` or ``DatabasePool`` opens and prepares its connections.
///
/// ```swift
/// var configuration = Configuration()
/// configuration.label = "app"
/// configuration.prepareDatabase { db in
///     try db.add(function: DatabaseFunction("slugify", deterministic: true) { (text: String) in ... })
///     try db.attach(path: metadatabasePath, as: "sync")
/// }
/// let pool = try DatabasePool(path: path, configuration: configuration)
/// ```
public struct Configuration: Sendable {
    /// A name for the database in traces, errors and thread names.
    public var label: String?

    /// Opens every connection read-only; writes fail with `SQLITE_READONLY`.
    public var readOnly = false

    /// How many reader connections a ``DatabasePool`` opens at most (they open on demand).
    public var maximumReaderCount = 5

    /// How long a connection waits for a lock held by another connection before failing with
    /// `SQLITE_BUSY`.
    public var busyTimeout: Duration = .seconds(5)

    /// Whether `PRAGMA foreign_keys` is on. It is on by default, as users of this kind of
    /// library expect cascades and constraints to hold.
    public var foreignKeysEnabled = true

    /// How many prepared statements each connection keeps (least recently used are finalized first).
    public var statementCacheCapacity = 64

    /// How long, in all, the observers of one commit may spend re-fetching inline on the
    /// writer's thread right after it (``DatabaseReader/readAfterCommit(estimatedDuration:_:completion:)``),
    /// instead of handing their reads to a reader's queue. A hand-off wakes another thread,
    /// which costs more than a small read (41 µs median on the 2-core virtual machine of
    /// `Documentation/Performance.md`, against 22 µs for a 50-row fetch); the write's caller
    /// waits for the inline reads. `.zero` turns inline reads off. A ``DatabasePool`` only.
    public var inlineObservationBudget: Duration = .microseconds(100)

    /// Closures run on every new connection, writer and readers alike, in the order added.
    var preparations: [@Sendable (Database) throws -> Void] = []

    /// The defaults: five readers, a five-second busy timeout, foreign keys on, 64 cached
    /// statements per connection.
    public init() {}

    /// Adds a closure run on every connection when it opens: install SQL functions, attach
    /// databases, create temporary views and triggers, set a trace.
    ///
    /// Reader connections are read-only, so a preparation must not write to the main
    /// database; `CREATE TEMP VIEW` and `CREATE TEMP TRIGGER` are allowed.
    public mutating func prepareDatabase(_ body: @escaping @Sendable (Database) throws -> Void) {
        preparations.append(body)
    }
}
