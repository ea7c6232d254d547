import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process whose output a test reads without ever blocking Swift's cooperative pool:
/// a thread of its own reads the pipe, and every wait is bounded. A child that has not done
/// what was awaited by then is killed (SIGKILL), so nothing outlives the test.
final class ChildProcess: Sendable {
    enum Failure: Error, CustomStringConvertible {
        case ended(String)
        case timedOut(String)
        case failed(Int32, String)

        var description: String {
            switch self {
            case .ended(let text): "ended early:\n\(text)"
            case .timedOut(let text): "killed after its time ran out:\n\(text)"
            case .failed(let status, let text): "exit \(status):\n\(text)"
            }
        }
    }

    private struct State {
        var output = ""
        var version = 0
        var outputEnded = false
        var exitStatus: Int32?
        var waiters: [(version: Int, continuation: CheckedContinuation<Void, Never>)] = []

        var finished: Bool { outputEnded && exitStatus != nil }
    }

    let process: Process
    private let state = Mutex(State())

    init(_ executable: URL, _ arguments: [String]) throws {
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.terminationHandler = { [self] process in
            update { $0.exitStatus = process.terminationStatus }
        }
        try process.run()
        let handle = pipe.fileHandleForReading
        let thread = Thread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty {
                    update { $0.outputEnded = true }
                    return
                }
                update { $0.output += String(decoding: data, as: UTF8.self) }
            }
        }
        thread.name = "child output"
        thread.start()
    }

    private func update(_ change: (inout State) -> Void) {
        let waiters = state.withLock { state in
            change(&state)
            state.version += 1
            defer { state.waiters.removeAll() }
            return state.waiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the state moved past `version`.
    private func change(after version: Int) async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.version != version { return true }
                state.waiters.append((version, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Waits until `done` says yes about the output, or the time runs out (then the child is
    /// killed, which ends the wait).
    private func wait<T: Sendable>(within limit: Duration, _ done: @escaping @Sendable (String, Bool, Int32?) throws -> T?) async throws -> T {
        let fired = Flag()
        let killer = Task { [process] in
            try await Task.sleep(for: limit)
            fired.set()
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        defer { killer.cancel() }
        while true {
            let (output, version, finished, status) = state.withLock { ($0.output, $0.version, $0.finished, $0.exitStatus) }
            if finished, fired.isSet { throw Failure.timedOut(output) }
            if let value = try done(output, finished, status) { return value }
            if finished { throw Failure.ended(output) }
            await change(after: version)
        }
    }

    /// Reads until the output contains `text`; returns everything read so far.
    @discardableResult
    func read(until text: String, within limit: Duration = .seconds(30)) async throws -> String {
        try await wait(within: limit) { output, _, _ in output.contains(text) ? output : nil }
    }

    /// Waits for the child to exit with status 0 and returns its output.
    func finish(within limit: Duration = .seconds(60)) async throws -> String {
        try await wait(within: limit) { output, finished, status in
            guard finished, let status else { return nil }
            guard status == 0 else { throw Failure.failed(status, output) }
            return output
        }
    }

    private final class Flag: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    /// Sends SIGTERM; the child's own shutdown follows.
    func stop() {
        if process.isRunning { process.terminate() }
    }
}
