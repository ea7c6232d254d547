import BenchSupport
import Foundation

/// Where, when and on what a run measured: the header of the text, the JSON and the chart.
struct ReportHeader {
    var machine: String
    var swift: String?
    var commit: String
    var date: String
    var loadAtStart: String
    var loadAtEnd = ""
    var sizes: String

    var load: String { "\(loadAtStart) at start, \(loadAtEnd) at end" }

    func printLines() {
        print("strata-cloud-bench — issue #27's sync targets")
        print("machine  \(machine)\(swift.map { ", \($0)" } ?? "")")
        print("commit   \(commit)   date \(date)")
        print("load     \(loadAtStart) (1, 5, 15 min) at start")
        print("sizes    \(sizes)")
    }
}

/// `{"machine", "commit", "date", "load", "swift", "sizes", "results": [{"metric", "value", "unit"}]}`.
func renderJSON(_ header: ReportHeader, _ results: Results) -> String {
    var json = "{\"machine\": \(jsonString(header.machine)), \"commit\": \(jsonString(header.commit)), "
    json += "\"date\": \(jsonString(header.date)), "
    json += "\"load\": {\"start\": \(jsonString(header.loadAtStart)), \"end\": \(jsonString(header.loadAtEnd))}, "
    json += "\"swift\": \(header.swift.map(jsonString) ?? "null"), \"sizes\": \(jsonString(header.sizes)),\n\"results\": [\n"
    json += results.metrics.map {
        "    {\"metric\": \(jsonString($0.name)), \"value\": \(jsonNumber($0.value)), \"unit\": \(jsonString($0.unit))}"
    }.joined(separator: ",\n")
    return json + "\n]}\n"
}
