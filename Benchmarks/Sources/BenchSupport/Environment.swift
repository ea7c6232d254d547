import Foundation

// What every report names: the machine, the commit, the date and the load it ran under.

/// The kernel, the architecture, the cores and the memory, e.g. "Linux 6.18 x86_64, 2 cores, 23 GB".
public func machineDescription() -> String {
    var info = utsname()
    uname(&info)
    func field<T>(_ value: T) -> String {
        withUnsafeBytes(of: value) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
    let cores = ProcessInfo.processInfo.activeProcessorCount
    let gigabytes = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
    return "\(field(info.sysname)) \(field(info.release)) \(field(info.machine)), \(cores) cores, \(Int(gigabytes.rounded())) GB"
}

/// The standard output of `executable` run with `arguments`, trimmed; nil when it fails.
/// Blocks the calling thread: call it at start-up, not from a task that others wait on.
public func run(_ executable: String, _ arguments: [String]) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return nil }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

/// The short hash of the repository's HEAD: `STRATA_BENCH_COMMIT` when set, else git in the
/// repository this source file belongs to, else in the current directory.
public func gitCommit() -> String {
    if let commit = ProcessInfo.processInfo.environment["STRATA_BENCH_COMMIT"], !commit.isEmpty { return commit }
    // This file is Benchmarks/Sources/BenchSupport/Environment.swift in the repository.
    let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    for git in ["/usr/bin/git", "/usr/local/bin/git", "/bin/git"] where FileManager.default.isExecutableFile(atPath: git) {
        for directory in [repository, FileManager.default.currentDirectoryPath] {
            if let commit = run(git, ["-C", directory, "rev-parse", "--short", "HEAD"]), !commit.isEmpty {
                return commit
            }
        }
    }
    return "unknown"
}

/// The first line of `swift --version` (the toolchain on the PATH, which is normally the one
/// that built this binary), or nil.
public func swiftVersion() -> String? {
    for swift in ["/opt/swift/usr/bin/swift", "/usr/bin/swift", "/usr/local/bin/swift"]
    where FileManager.default.isExecutableFile(atPath: swift) {
        if let text = run(swift, ["--version"]), let first = text.split(separator: "\n").first {
            return String(first)
        }
    }
    return nil
}

/// Now, UTC, ISO 8601 to the minute.
public func isoDate() -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
    return formatter.string(from: Date())
}

/// The 1-, 5- and 15-minute load averages (Linux), or "unknown".
public func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}
