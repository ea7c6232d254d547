import BenchSupport
import Foundation

/// One measured figure, as the JSON names it.
struct Metric {
    var name: String
    var value: Double
    var unit: String
}

/// The figures of a run, in the order they were measured; each is printed as it comes.
struct Results {
    private(set) var metrics: [Metric] = []

    mutating func add(_ name: String, _ value: Double, _ unit: String) {
        metrics.append(Metric(name: name, value: value, unit: unit))
        let target = Target.all.first { $0.metric == name }.map { "   (target \($0.comparison) \(format($0.limit)))" } ?? ""
        print("  \(name.padding(toLength: 46, withPad: " ", startingAt: 0)) \(format(value).leftPadded(12)) \(unit)\(target)")
    }

    func value(_ name: String) -> Double? { metrics.first { $0.name == name }?.value }
}

/// Issue #27's targets, what the chart compares each figure with.
struct Target {
    var metric: String
    var label: String
    var limit: Double
    /// Rates must reach the limit; times, ratios and memory must stay under it.
    var higherIsBetter: Bool

    var comparison: String { higherIsBetter ? "≥" : "≤" }

    func met(by value: Double) -> Bool { higherIsBetter ? value >= limit : value <= limit }

    static let all = [
        Target(metric: "first_sync_upload_rows_per_s", label: "first sync upload", limit: 30_000, higherIsBetter: true),
        Target(metric: "first_sync_download_rows_per_s", label: "first sync download", limit: 30_000, higherIsBetter: true),
        Target(metric: "first_sync_vs_raw_bulk", label: "first sync ÷ raw bulk load", limit: 3, higherIsBetter: false),
        Target(metric: "million_rows_client_peak_rss_mb", label: "million rows: client peak RSS", limit: 256, higherIsBetter: false),
        Target(metric: "million_rows_service_peak_rss_mb", label: "million rows: service peak RSS", limit: 256, higherIsBetter: false),
        Target(metric: "engine_upload_vs_insert", label: "engine upload ÷ insert", limit: 3, higherIsBetter: false),
        Target(metric: "engine_apply_vs_insert", label: "engine apply ÷ insert", limit: 3, higherIsBetter: false),
        Target(metric: "capture_vs_insert", label: "capture ÷ insert", limit: 1.3, higherIsBetter: false),
        Target(metric: "push_p50_ms", label: "push latency p50", limit: 10, higherIsBetter: false),
        Target(metric: "push_p99_ms", label: "push latency p99", limit: 30, higherIsBetter: false),
        Target(metric: "devices_records_per_s", label: "devices sending, one instance", limit: 20_000, higherIsBetter: true),
        Target(
            metric: "devices_records_per_s_two_instances", label: "devices sending, two instances", limit: 20_000, higherIsBetter: true),
    ]
}

/// A figure with the digits it deserves: whole numbers from 100 up, three significant digits below.
func format(_ value: Double) -> String {
    abs(value) >= 100 ? String(format: "%.0f", value) : String(format: "%.3g", value)
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
