/// Whether one observation started by ``DatabaseObservation`` still runs: registered with the
/// database, so commits to the tables it read trigger a re-fetch.
///
/// It turns false for good when the observation ends (its iterator was released, its consuming
/// task was cancelled, or a fetch failed) and its registration with the database was removed.
/// Reading it does not keep the observation alive. Unlike the database-wide
/// `changeHub.observerCount`, it concerns this one observation, so a test can check that one
/// observation was freed while others keep running:
///
/// ```swift
/// var iterator = observe(in: pool) { db in try Player.fetchCount(db) }.makeAsyncIterator()
/// let status = iterator.status
/// let consumer = Task { [iterator] in
///     var iterator = iterator
///     while try await iterator.next() != nil {}
/// }
/// consumer.cancel()
/// _ = await consumer.result
/// #expect(!status.isActive)
/// ```
public struct DatabaseObservationStatus: Sendable {
    private let isRegistered: @Sendable () -> Bool

    init<Value>(observer: QueryObserver<Value>) {
        isRegistered = { [weak observer] in observer?.isRegistered ?? false }
    }

    /// Whether the observation is still registered for commits. Safe to read from any thread.
    public var isActive: Bool { isRegistered() }
}
