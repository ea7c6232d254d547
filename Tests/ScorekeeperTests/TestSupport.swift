import Foundation
import ScorekeeperCore
import Strata
import Synchronization

/// Runs `body` live on the file at `path`, as `scorekeeper --database PATH` does; the database
/// is released when `body` returns, as at the end of a process.
func live<T>(_ path: String, _ body: () throws -> T) throws -> T {
    try withDependencies {
        $0.context = .live
        try $0.bootstrapDatabase(path: path)
    } operation: {
        try body()
    }
}

/// Collects what a command prints, and lets a test wait for a line.
final class OutputRecorder: Sendable {
    private let state = Mutex<(text: String, waiters: [(String, CheckedContinuation<Void, Never>)])>(("", []))

    var text: String { state.withLock { $0.text } }

    func write(_ chunk: String) {
        let ready = state.withLock { state in
            state.text += chunk
            let text = state.text
            let ready = state.waiters.filter { text.contains($0.0) }.map(\.1)
            state.waiters.removeAll { text.contains($0.0) }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// Returns once the output contains `fragment`.
    func waitFor(_ fragment: String) async {
        await withCheckedContinuation { continuation in
            let isThere = state.withLock { state in
                if state.text.contains(fragment) { return true }
                state.waiters.append((fragment, continuation))
                return false
            }
            if isThere { continuation.resume() }
        }
    }
}
