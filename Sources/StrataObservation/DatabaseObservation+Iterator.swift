import StrataSQLite

extension DatabaseObservation {
    /// Receives the values of one observation: each iterator runs its own, started when it was
    /// made and ended when it is released or the task consuming it is cancelled.
    ///
    /// ```swift
    /// var iterator = observe(in: pool) { db in try Player.fetchCount(db) }.makeAsyncIterator()
    /// let status = iterator.status          // Sendable: keep it to check on the observation
    /// let count = try await iterator.next()
    /// ```
    public struct Iterator: AsyncIteratorProtocol {
        /// Each element is one fetched value.
        public typealias Element = Value
        /// The error of the fetch that failed.
        public typealias Failure = any Error

        private var base: AsyncThrowingStream<Value, any Error>.Iterator

        /// Whether this iterator's observation still runs, as a value that can be kept and read
        /// from any task after the iterator itself was handed to a consumer.
        public let status: DatabaseObservationStatus

        init(base: AsyncThrowingStream<Value, any Error>.Iterator, status: DatabaseObservationStatus) {
            self.base = base
            self.status = status
        }

        /// Whether this iterator's observation is still registered for commits. Same as
        /// `status.isActive`.
        public var isActive: Bool { status.isActive }

        /// The next value: the current one first, then one per relevant commit (the newest, when
        /// several arrived since the last call). Nil once the observation ended by cancellation;
        /// throws the error of a failing fetch.
        public mutating func next() async throws -> Value? {
            try await base.next()
        }

        /// The next value, resuming on `actor`. See ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> Value? {
            try await base.next(isolation: actor)
        }
    }
}
