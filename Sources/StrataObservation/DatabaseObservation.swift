import StrataSQLite

/// The values of a fetch, re-run after every commit that changed what it read.
///
/// ```swift
/// for try await players in observe(in: database, { db in try Player.fetchAll(db, sql: "SELECT * FROM players ORDER BY score DESC") }) {
///     print(players)
/// }
/// ```
///
/// - The first element is the current value; then one element per relevant commit, with
///   commits that land during a fetch coalesced into one follow-up fetch. A consumer slower
///   than the database only ever receives the newest value.
/// - Writes to tables the fetch did not read cause no fetch at all; rolled-back transactions
///   notify nobody.
/// - A failing fetch ends the sequence by throwing the error.
/// - Cancelling the consuming task ends the observation and frees its registration.
/// - Only commits made through `database` are seen. Call
///   `DatabaseWriter.notifyChanges(in:)` for changes made by other processes or
///   other connections.
///
/// Each iteration (each `for await` loop) runs its own observation.
public struct DatabaseObservation<Value: Sendable>: AsyncSequence, Sendable {
    /// Each element is one fetched value.
    public typealias Element = Value
    /// A failing fetch ends the sequence with its error.
    public typealias Failure = any Error

    let database: any DatabaseWriter
    let fetch: @Sendable (Database) throws -> Value
    var isDuplicate: (@Sendable (Value, Value) -> Bool)?

    /// An observation of `fetch` in `database`; nothing runs until it is iterated. Same as
    /// ``observe(in:_:)``.
    ///
    /// - Parameters:
    ///   - database: the writer whose commits trigger re-fetches; fetches run on its readers.
    ///   - fetch: reads the value. It runs on a reader, possibly concurrently with writes, and
    ///     every table it reads is observed.
    public init(in database: any DatabaseWriter, fetch: @escaping @Sendable (Database) throws -> Value) {
        self.database = database
        self.fetch = fetch
    }

    /// Skips values equal to the previous element: a commit that changed a table the fetch
    /// reads, but not the fetched value, delivers nothing.
    public func removingDuplicates() -> DatabaseObservation where Value: Equatable {
        var copy = self
        copy.isDuplicate = { $0 == $1 }
        return copy
    }

    /// Starts a new observation of `fetch` and returns the iterator that receives its values.
    ///
    /// The observation is registered with the database before this returns, and ends when the
    /// iterator is released or its consuming task is cancelled; ``Iterator/status`` tells
    /// whether it still runs.
    public func makeAsyncIterator() -> Iterator {
        let (stream, observer) = makeStream()
        return Iterator(base: stream.makeAsyncIterator(), status: DatabaseObservationStatus(observer: observer))
    }

    func makeStream() -> (AsyncThrowingStream<Value, any Error>, QueryObserver<Value>) {
        let (stream, continuation) = AsyncThrowingStream<Value, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let filter = DuplicateFilter(isDuplicate: isDuplicate)
        let observer = QueryObserver(writer: database, fetch: fetch) { result, _ in
            switch result {
            case .success(let value):
                if filter.shouldDeliver(value) { continuation.yield(value) }
            case .failure(let error):
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in observer.cancel() }
        observer.start()
        return (stream, observer)
    }
}

/// Observes the value of `fetch` in `database`: the current value, then a new one after every
/// commit that changed a table `fetch` read. See ``DatabaseObservation`` for the guarantees.
///
/// ```swift
/// for try await count in observe(in: pool, { db in try Player.fetchCount(db) }) {
///     print("\(count) players")
/// }
/// ```
public func observe<Value: Sendable>(
    in database: any DatabaseWriter, _ fetch: @escaping @Sendable (Database) throws -> Value
) -> DatabaseObservation<Value> {
    DatabaseObservation(in: database, fetch: fetch)
}
