import Synchronization

/// A flag that closures running on other threads can share.
package final class SharedFlag: Sendable {
    package let value = Atomic<Bool>(false)

    package init() {}
}
