import Synchronization

/// A thread-safe list, for closures that record what happened (traces, migration logs).
package final class Recorder<Element: Sendable>: Sendable {
    private let storage = Mutex<[Element]>([])

    package init() {}

    package func append(_ element: Element) { storage.withLock { $0.append(element) } }

    package var elements: [Element] { storage.withLock { $0 } }
}
