import BenchSupport
import Foundation
import Synchronization

/// This executable run again as a child (`serve`, `device`), so that the service and the
/// client each have a process of their own whose peak memory can be read apart. The child
/// reports on standard output in lines `KEY VALUE`; its standard error is ours. Waiting never
/// blocks a thread of the cooperative pool: the pipe's readability handler and the process's
/// termination handler resume continuations.
// Unchecked: `Process` and `Pipe` are not Sendable, but after `run()` only `terminate()` and
// the handlers touch them, and every mutable field is behind the mutex.
final class ChildProcess: @unchecked Sendable {
    private struct State {
        var partial = Data()
        var values: [String: String] = [:]
        var ended = false
        var status: Int32?
        var valueWaiters: [(key: String, continuation: CheckedContinuation<String, any Error>)] = []
        var exitWaiters: [CheckedContinuation<Int32, Never>] = []
    }

    let name: String
    private let process = Process()
    private let input = Pipe()
    private let state = Mutex(State())

    /// Starts `strata-cloud-bench ARGUMENTS`.
    init(name: String, arguments: [String]) throws {
        self.name = name
        process.executableURL = URL(fileURLWithPath: Self.executablePath)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        // The child ends itself when this pipe closes, also when this process dies first.
        process.standardInput = input
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }
            self?.received(data)
        }
        process.terminationHandler = { [weak self] process in
            self?.exited(process.terminationStatus)
        }
        try process.run()
    }

    /// The running binary: `/proc/self/exe`, whatever the working directory or argv[0].
    static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    var processIdentifier: Int32 { process.processIdentifier }

    /// The value of the child's first `KEY VALUE` line for `key`, once it has printed it.
    func value(_ key: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<String, any Error>? = state.withLock { state in
                if let value = state.values[key] { return .success(value) }
                if state.ended { return .failure(BenchFailure("\(name) ended without reporting \(key)")) }
                state.valueWaiters.append((key, continuation))
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// A numeric value of the child's report.
    func number(_ key: String) async throws -> Double {
        let text = try await value(key)
        guard let number = Double(text) else { throw BenchFailure("\(name) reported \(key) \(text), not a number") }
        return number
    }

    /// Asks the child to finish (SIGTERM: a service shuts down gracefully and reports its peak
    /// memory) and waits for it.
    func stop() async throws {
        process.terminate()
        try await waitForSuccess()
    }

    /// Waits for the child to exit; throws when it failed.
    func waitForSuccess() async throws {
        let status = await withCheckedContinuation { continuation in
            let done: Int32? = state.withLock { state in
                if let status = state.status { return status }
                state.exitWaiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
        try? input.fileHandleForWriting.close()
        guard status == 0 || status == SIGTERM else { throw BenchFailure("\(name) exited with status \(status)") }
    }

    private func received(_ data: Data) {
        var resumed: [(CheckedContinuation<String, any Error>, Result<String, any Error>)] = []
        state.withLock { state in
            if data.isEmpty {
                state.ended = true
            } else {
                state.partial.append(data)
                while let newline = state.partial.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: state.partial[state.partial.startIndex..<newline], as: UTF8.self)
                    state.partial.removeSubrange(state.partial.startIndex...newline)
                    let parts = line.split(separator: " ", maxSplits: 1)
                    if parts.count == 2, state.values[String(parts[0])] == nil { state.values[String(parts[0])] = String(parts[1]) }
                }
            }
            state.valueWaiters.removeAll { waiter in
                if let value = state.values[waiter.key] {
                    resumed.append((waiter.continuation, .success(value)))
                    return true
                }
                if state.ended {
                    resumed.append((waiter.continuation, .failure(BenchFailure("\(name) ended without reporting \(waiter.key)"))))
                    return true
                }
                return false
            }
        }
        for (continuation, result) in resumed { continuation.resume(with: result) }
    }

    private func exited(_ status: Int32) {
        let waiters = state.withLock { state in
            state.status = status
            defer { state.exitWaiters = [] }
            return state.exitWaiters
        }
        for waiter in waiters { waiter.resume(returning: status) }
    }
}

/// A child's side of the protocol: one `KEY VALUE` line on standard output.
func report(_ key: String, _ value: CustomStringConvertible) {
    print("\(key) \(value)")
    fflush(stdout)
}

/// Ends this child process when its parent closes our standard input (or dies): a thread of
/// its own blocks on the read, never a thread of the cooperative pool.
func exitWhenParentGoes() {
    let thread = Thread {
        _ = FileHandle.standardInput.readDataToEndOfFile()
        kill(getpid(), SIGTERM)
    }
    thread.start()
}
