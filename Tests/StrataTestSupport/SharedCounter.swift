import Synchronization

/// A counter that closures running on other threads can share (an `Atomic` cannot be
/// captured by an escaping closure directly).
package final class SharedCounter: Sendable {
    package let value = Atomic<Int>(0)

    package init() {}

    /// Adds one.
    package func increment() { value.add(1, ordering: .sequentiallyConsistent) }

    /// The current count.
    package var count: Int { value.load(ordering: .sequentiallyConsistent) }
}
