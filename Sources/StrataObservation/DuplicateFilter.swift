import Synchronization

/// Remembers the last delivered value to drop repeats. Deliveries of one observation never
/// overlap, but they may run on different threads, hence the lock.
final class DuplicateFilter<Value: Sendable>: Sendable {
    private let isDuplicate: (@Sendable (Value, Value) -> Bool)?
    private let last = Mutex<Value?>(nil)

    init(isDuplicate: (@Sendable (Value, Value) -> Bool)?) {
        self.isDuplicate = isDuplicate
    }

    func shouldDeliver(_ value: Value) -> Bool {
        guard let isDuplicate else { return true }
        return last.withLock { last in
            if let previous = last, isDuplicate(previous, value) { return false }
            last = value
            return true
        }
    }
}
