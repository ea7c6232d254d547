import Foundation

/// Resident memory of a process, from Linux's `/proc/<pid>/status` (0 elsewhere).
public enum ResidentMemory {
    /// A `kB` field of `/proc/<process>/status` (`VmHWM:` is the peak, `VmRSS:` the current
    /// size), in bytes; 0 where there is none.
    public static func bytes(field: String, process: String = "self") -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            let digits = line.dropFirst(field.count).filter(\.isNumber)
            return (Int(digits) ?? 0) * 1024
        }
        return 0
    }

    /// This process's peak resident memory so far, in bytes.
    public static var peakBytes: Int { bytes(field: "VmHWM:") }

    /// Resets this process's peak to its current resident size ("5" to clear_refs, Linux 4.0
    /// and later), so that a later peak belongs to what ran in between.
    public static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }
}
