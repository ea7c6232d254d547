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

    /// The child's process id.
    let pid: pid_t
    private let state = Mutex(State())

    /// Starts `executable` with `arguments`, standard input on /dev/null and standard error
    /// there too, or into the output (a failure's message then shows in the test's error).
    ///
    /// Spawned and reaped by hand (`posix_spawn`, then `waitpid` on a thread of its own), not
    /// with Foundation's `Process`: its exit notification once never came for a child that had
    /// exited (left a zombie), and a test waiting for it hung.
    init(_ executable: URL, _ arguments: [String], standardErrorToOutput: Bool = false) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw Failure.ended("pipe failed: \(errno)") }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        // Neither end may leak into other children this process starts meanwhile.
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        if standardErrorToOutput {
            posix_spawn_file_actions_adddup2(&actions, writeEnd, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var child: pid_t = 0
        let code = posix_spawn(&child, executable.path, &actions, nil, argv, environ)
        close(writeEnd)
        guard code == 0 else {
            close(readEnd)
            throw Failure.ended("posix_spawn \(executable.path) failed: \(code)")
        }
        pid = child
        let reader = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(readEnd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    close(readEnd)
                    update { $0.outputEnded = true }
                    return
                }
                let text = String(decoding: buffer[0..<count], as: UTF8.self)
                update { $0.output += text }
            }
        }
        reader.name = "child output"
        reader.start()
        let waiter = Thread { [self, child] in
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            // WEXITSTATUS / WTERMSIG by hand: the macros do not import.
            let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            update { $0.exitStatus = exit }
        }
        waiter.name = "child exit"
        waiter.start()
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
    /// Returns once the state moved past `version`, or the task was cancelled (a test's time
    /// limit ran out).
    private func change(after version: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    if state.version != version || Task.isCancelled { return true }
                    state.waiters.append((version, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            update { _ in }
        }
    }

    /// Waits until `done` says yes about the output, or the time runs out (then the child is
    /// killed, which ends the wait).
    private func wait<T: Sendable>(
        within limit: Duration, _ done: @escaping @Sendable (String, Bool, Int32?) throws -> T?
    ) async throws -> T {
        let fired = Flag()
        let killer = Task { [self] in
            try await Task.sleep(for: limit)
            fired.set()
            if state.withLock({ $0.exitStatus == nil }) { kill(pid, SIGKILL) }
            // Wake the wait even if a grandchild keeps the output open.
            update { _ in }
        }
        defer { killer.cancel() }
        while true {
            let (output, version, finished, status) = state.withLock { ($0.output, $0.version, $0.finished, $0.exitStatus) }
            if (finished || status != nil), fired.isSet { throw Failure.timedOut(output) }
            if let value = try done(output, finished, status) { return value }
            if finished { throw Failure.ended(output) }
            if Task.isCancelled {
                if status == nil { kill(pid, SIGKILL) }
                throw CancellationError()
            }
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

    /// Waits for the child to exit, whatever its status (128 + N for signal N).
    func exitStatus(within limit: Duration = .seconds(60)) async throws -> Int32 {
        try await wait(within: limit) { _, _, status in status }
    }

    /// Sends `signal` to the child.
    func send(_ signal: Int32) {
        if state.withLock({ $0.exitStatus == nil }) { kill(pid, signal) }
    }

    /// Sends SIGTERM; the child's own shutdown follows.
    func stop() {
        if state.withLock({ $0.exitStatus == nil }) { kill(pid, SIGTERM) }
    }
}
