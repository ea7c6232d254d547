import BenchSupport
import Foundation

struct Options {
    var quick = false
    var jsonPath: String?
    var svgPath: String?
    var filters: [String] = []
    var libraries: [String]?
    var sizes: [Int]?
    var iterations: Int?
    var directory: String?

    static let usage = """
        usage: strata-bench [--quick] [--json PATH] [--svg PATH] [--filter NAME[,NAME]]
                            [--library NAME[,NAME]] [--sizes N[,N]] [--iterations K] [--dir PATH]

          --quick         1k and 10k rows only, fewer iterations (a few seconds)
          --json PATH     write the results as JSON
          --svg PATH      write a bar chart of each library's time relative to sqlite-c
          --filter NAME   run the workloads whose name contains NAME (fetch-structs, insert,
                          fetch-by-key, update-by-key, delete-by-key, concurrent-reads; opt-in:
                          assets, sync)
          --library NAME  run only these libraries (sqlite-c, strata, strata-table, grdb-record,
                          grdb-fast, grdb-codable, sqlite-nio); ratios need sqlite-c,
                          grdb-record and grdb-fast in the run
          --sizes N       row counts (default 1000,10000,100000,1000000; quick: 1000,10000)
          --iterations K  timed iterations per case (default depends on the size)
          --dir PATH      where the database files go (default: a new temporary folder)
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        func value(_ flag: String) throws -> String {
            guard let value = iterator.next() else { throw BenchFailure("\(flag) needs a value\n\(usage)") }
            return value
        }
        func list(_ text: String) -> [String] {
            text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        while let argument = iterator.next() {
            switch argument {
            case "--quick": options.quick = true
            case "--json": options.jsonPath = try value(argument)
            case "--svg": options.svgPath = try value(argument)
            case "--filter": options.filters += list(try value(argument))
            case "--library", "--libraries": options.libraries = list(try value(argument))
            case "--sizes":
                options.sizes = try list(try value(argument)).map {
                    guard let size = Int($0.replacingOccurrences(of: "_", with: "")), size > 0 else {
                        throw BenchFailure("bad size \($0)")
                    }
                    return size
                }
            case "--iterations":
                guard let count = Int(try value(argument)), count > 0 else { throw BenchFailure("bad --iterations") }
                options.iterations = count
            case "--dir": options.directory = try value(argument)
            case "-h", "--help":
                print(usage)
                exit(0)
            default:
                throw BenchFailure("unknown argument \(argument)\n\(usage)")
            }
        }
        return options
    }

    var effectiveSizes: [Int] {
        sizes ?? (quick ? [1_000, 10_000] : [1_000, 10_000, 100_000, 1_000_000])
    }

    func runs(workload: String) -> Bool {
        filters.isEmpty || filters.contains { workload.contains($0) }
    }

    func iterationCount(size: Int) -> Int {
        if let iterations { return iterations }
        if quick { return size <= 1_000 ? 5 : 3 }
        switch size {
        case ...1_000: return 20
        case ...10_000: return 10
        case ...100_000: return 7
        default: return 3
        }
    }

    func warmUpCount(size: Int) -> Int {
        quick ? 1 : (size <= 10_000 ? 2 : 1)
    }
}

struct Measurement {
    var workload: String
    var size: Int
    var library: String
    var seconds: [Double]
    var check: Int

    var sorted: [Double] { seconds.sorted() }
    var median: Double {
        let s = sorted
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
    var min: Double { sorted.first ?? 0 }
    var max: Double { sorted.last ?? 0 }
}

/// Times `body` with a monotonic clock: `warmUp` untimed runs, then `iterations` timed ones.
/// `setUp` runs before every run, warm-up or timed, and is never timed.
func measure(
    warmUp: Int, iterations: Int, setUp: () throws -> Void, _ body: () throws -> Int
) throws -> (seconds: [Double], check: Int) {
    let clock = ContinuousClock()
    var check = 0
    for _ in 0..<warmUp {
        try setUp()
        check = try body()
    }
    var seconds: [Double] = []
    for _ in 0..<iterations {
        try setUp()
        var result = 0
        let elapsed = try clock.measure { result = try body() }
        if warmUp == 0 && seconds.isEmpty { check = result }
        guard result == check else {
            throw BenchFailure("the result changed between iterations: \(check) then \(result)")
        }
        seconds.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    return (seconds, check)
}

// MARK: - Reports

func formatSeconds(_ seconds: Double) -> String {
    switch seconds {
    case ..<0.001: String(format: "%.1f µs", seconds * 1e6)
    case ..<1: String(format: "%.2f ms", seconds * 1e3)
    default: String(format: "%.3f s", seconds)
    }
}

func ratio(_ measurement: Measurement, to library: String, in all: [Measurement]) -> Double? {
    guard
        let base = all.first(where: {
            $0.workload == measurement.workload && $0.size == measurement.size && $0.library == library
        }), base.median > 0
    else { return nil }
    return measurement.median / base.median
}

func formatSize(_ size: Int) -> String {
    switch size {
    case let s where s >= 1_000_000 && s % 1_000_000 == 0: "\(s / 1_000_000)M"
    case let s where s >= 1_000 && s % 1_000 == 0: "\(s / 1_000)k"
    default: "\(size)"
    }
}

func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let count = text.count
    guard count < width else { return text }
    let padding = String(repeating: " ", count: width - count)
    return right ? padding + text : text + padding
}

func renderTable(_ results: [Measurement]) -> String {
    let headers = ["workload", "rows", "library", "median", "min", "max", "iter", "x sqlite-c", "x grdb-record", "x grdb-fast"]
    var rows: [[String]] = []
    var previousGroup = ""
    var separators: Set<Int> = []
    for result in results {
        let group = "\(result.workload)/\(result.size)"
        if group != previousGroup, !rows.isEmpty { separators.insert(rows.count) }
        previousGroup = group
        rows.append([
            result.workload, formatSize(result.size), result.library,
            formatSeconds(result.median), formatSeconds(result.min), formatSeconds(result.max),
            "\(result.seconds.count)",
            ratio(result, to: "sqlite-c", in: results).map { String(format: "%.2fx", $0) } ?? "-",
            ratio(result, to: "grdb-record", in: results).map { String(format: "%.2fx", $0) } ?? "-",
            ratio(result, to: "grdb-fast", in: results).map { String(format: "%.2fx", $0) } ?? "-",
        ])
    }
    let rightAligned: Set<Int> = [1, 3, 4, 5, 6, 7, 8, 9]
    let widths = headers.indices.map { column in
        ([headers[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
    }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { pad($0.element, widths[$0.offset], right: rightAligned.contains($0.offset)) }
            .joined(separator: "  ")
    }
    let rule = String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1))
    var output = [line(headers), rule]
    for (index, row) in rows.enumerated() {
        if separators.contains(index) { output.append("") }
        output.append(line(row))
    }
    return output.joined(separator: "\n")
}

/// What every report names: where, when and what was measured.
struct ReportHeader {
    var machine: String
    var commit: String
    var date: String
    var sqlite: String
    /// The SQLite sqlite-nio compiles in, when it ran: not the one the others share.
    var sqliteNIO: String?
    var load: String
    var quick: Bool
}

func renderJSON(_ header: ReportHeader, results: [Measurement], observation: [ObservationMeasurement]) -> String {
    let entries = results.map { result in
        "    {\"workload\": \(jsonString(result.workload)), \"size\": \(result.size), \"library\": \(jsonString(result.library)), "
            + "\"seconds_median\": \(jsonNumber(result.median)), \"seconds_min\": \(jsonNumber(result.min)), "
            + "\"seconds_max\": \(jsonNumber(result.max)), \"iterations\": \(result.seconds.count), "
            + "\"seconds\": [\(result.seconds.map(jsonNumber).joined(separator: ", "))]}"
    }
    let observationEntries = observation.map { result in
        var fields = [
            "\"workload\": \(jsonString(result.workload))", "\"library\": \(jsonString(result.library))",
        ]
        if result.workload == "observation-write-overhead" {
            fields += ["\"observers\": \(result.parameter)", "\"writes\": \(result.writes)"]
        } else {
            fields += [
                "\"commits\": \(result.parameter)",
                "\"fetch_seconds_median\": \(jsonNumber(result.fetchMedian))",
                "\"from_write_call_seconds_median\": \(jsonNumber(result.fromWriteStartMedian))",
            ]
        }
        fields += [
            "\"seconds_median\": \(jsonNumber(result.median))",
            "\"seconds_min\": \(jsonNumber(result.seconds.min() ?? 0))",
            "\"seconds_max\": \(jsonNumber(result.seconds.max() ?? 0))",
            "\"seconds_p90\": \(jsonNumber(result.p90))",
            "\"iterations\": \(result.seconds.count)",
            "\"seconds\": [\(result.seconds.map(jsonNumber).joined(separator: ", "))]",
        ]
        return "    {" + fields.joined(separator: ", ") + "}"
    }
    var json = "{\"machine\": \(jsonString(header.machine)), \"commit\": \(jsonString(header.commit)), "
    json += "\"date\": \(jsonString(header.date)), \"sqlite\": \(jsonString(header.sqlite)), "
    if let sqliteNIO = header.sqliteNIO { json += "\"sqlite_nio\": \(jsonString(sqliteNIO)), " }
    json += "\"load_average\": \(jsonString(header.load)), \"quick\": \(header.quick),\n\"results\": [\n"
    json += entries.joined(separator: ",\n")
    json += "\n],\n\"observation\": [\n"
    json += observationEntries.joined(separator: ",\n")
    json += "\n]}\n"
    return json
}

/// Bar charts: for every row workload and size, one bar per library, its median time divided
/// by sqlite-c's (1.0 = as fast as the C API; shorter is faster); then the observation
/// workloads. The header names the machine, the date, the commit and the load.
func renderSVG(_ header: ReportHeader, results: [Measurement], observation: [ObservationMeasurement]) -> String {
    let colors = [
        "sqlite-c": "#7f7f7f", "strata": "#1f77b4", "strata-table": "#17becf", "grdb-record": "#ff7f0e",
        "grdb-fast": "#bcbd22", "grdb-codable": "#d62728", "sqlite-nio": "#9467bd", "grdb": "#ff7f0e",
    ]
    let libraryOrder = ["sqlite-c", "strata", "strata-table", "grdb-record", "grdb-fast", "grdb-codable", "sqlite-nio"]
    let barHeight = 14.0, barGap = 2.0, groupGap = 12.0
    let left = 190.0, chartWidth = 560.0, right = 200.0
    let width = left + chartWidth + right
    var body = ""
    var y = 10.0

    func text(_ x: Double, _ y: Double, _ content: String, attributes: String = "") -> String {
        "<text x=\"\(svgNumber(x))\" y=\"\(svgNumber(y))\"\(attributes.isEmpty ? "" : " " + attributes)>\(xmlEscape(content))</text>\n"
    }
    func legend(_ libraries: [String], at top: Double) -> String {
        var output = ""
        var x = 10.0
        for library in libraries {
            output +=
                "<rect x=\"\(svgNumber(x))\" y=\"\(svgNumber(top))\" width=\"10\" height=\"10\" fill=\"\(colors[library] ?? "#999")\"/>"
            output += text(x + 14, top + 9, library)
            x += 110
        }
        return output
    }
    /// Horizontal bars, groups of (label, [(library, value, label)]), scaled to `maxValue`;
    /// a bar beyond it is cut at the edge and marked with a zigzag (its label gives the value).
    func bars(
        _ groups: [(key: String, items: [(library: String, value: Double, label: String)])],
        maxValue: Double, reference: (value: Double, label: String)?
    ) -> String {
        func x(_ value: Double) -> Double { left + chartWidth * Swift.min(value, maxValue) / maxValue }
        var output = ""
        let top = y
        for group in groups {
            let groupHeight = Double(group.items.count) * (barHeight + barGap)
            output += text(left - 8, y + groupHeight / 2 + 4, group.key, attributes: "text-anchor=\"end\"")
            for item in group.items {
                let barWidth = Swift.max(1, x(item.value) - left)
                output +=
                    "<rect x=\"\(svgNumber(left))\" y=\"\(svgNumber(y))\" width=\"\(svgNumber(barWidth))\" height=\"\(svgNumber(barHeight))\" fill=\"\(colors[item.library] ?? "#999")\"><title>\(xmlEscape(item.library)): \(xmlEscape(item.label))</title></rect>"
                if item.value > maxValue {
                    let edge = left + barWidth
                    output +=
                        "<path d=\"M\(svgNumber(edge - 9)) \(svgNumber(y - 1)) l4 \(svgNumber(barHeight / 2 + 1)) l-4 \(svgNumber(barHeight / 2 + 1))\" stroke=\"white\" stroke-width=\"2\" fill=\"none\"/>"
                }
                output += text(left + barWidth + 4, y + barHeight - 3, item.label, attributes: "fill=\"#333\"")
                y += barHeight + barGap
            }
            y += groupGap
        }
        if let reference {
            output +=
                "<line x1=\"\(svgNumber(x(reference.value)))\" y1=\"\(svgNumber(top - 4))\" x2=\"\(svgNumber(x(reference.value)))\" y2=\"\(svgNumber(y - groupGap + 4))\" stroke=\"black\" stroke-dasharray=\"4 3\"/>\n"
            output += text(x(reference.value), y + 6, reference.label, attributes: "text-anchor=\"middle\" fill=\"#333\"")
            y += 14
        }
        return output
    }

    body += text(
        10, y + 14, "strata-bench: Strata vs the SQLite C API vs GRDB 7.10 vs SQLiteNIO 1.13" + (header.quick ? " (quick run)" : ""),
        attributes: "font-size=\"15\" font-weight=\"bold\"")
    y += 32
    let sqliteNIONote = header.sqliteNIO.map { " (sqlite-nio: its own SQLite \($0))" } ?? ""
    body += text(
        10, y, "\(header.machine) · \(header.date) · commit \(header.commit) · SQLite \(header.sqlite)\(sqliteNIONote)",
        attributes: "fill=\"#555\"")
    y += 15
    body += text(10, y, "load average (1, 5, 15 min) \(header.load)", attributes: "fill=\"#555\"")
    y += 22

    // Row workloads: ratio to sqlite-c.
    var groups: [(key: String, items: [(library: String, value: Double, label: String)])] = []
    for result in results {
        let key = "\(result.workload) \(formatSize(result.size))"
        guard let value = ratio(result, to: "sqlite-c", in: results) else { continue }
        let item = (library: result.library, value: value, label: String(format: "%.2fx", value))
        if let index = groups.firstIndex(where: { $0.key == key }) {
            groups[index].items.append(item)
        } else {
            groups.append((key, [item]))
        }
    }
    for index in groups.indices {
        groups[index].items.sort { (libraryOrder.firstIndex(of: $0.library) ?? 99) < (libraryOrder.firstIndex(of: $1.library) ?? 99) }
    }
    if !groups.isEmpty {
        body += text(
            10, y + 4, "Median time relative to the raw SQLite C API (lower is faster; axis cut at 3x)",
            attributes: "font-size=\"13\" font-weight=\"bold\"")
        y += 14
        body += legend(libraryOrder, at: y)
        y += 24
        let maxRatio = Swift.min(3, Swift.max(1.5, (groups.flatMap { $0.items.map(\.value) }.max() ?? 1) * 1.05))
        body += bars(groups, maxValue: maxRatio, reference: (1, "1.0 = sqlite-c"))
        y += 16
    }

    // Observation: write overhead relative to the same library with no observer.
    let overhead = observation.filter { $0.workload == "observation-write-overhead" && $0.library != "sqlite-c" }
    if !overhead.isEmpty {
        let writes = overhead[0].writes
        body += text(
            10, y + 4, "Observation write overhead: \(writes) one-row commits while N observations watch other tables",
            attributes: "font-size=\"13\" font-weight=\"bold\"")
        y += 18
        body += text(
            10, y + 4, "median time relative to the same library with no observer (1.05 = the 5 % target; axis cut at 1.5x)",
            attributes: "fill=\"#555\"")
        y += 12
        body += legend(["strata", "grdb"], at: y)
        y += 24
        var observationGroups: [(key: String, items: [(library: String, value: Double, label: String)])] = []
        for count in Set(overhead.map { $0.parameter }).sorted() {
            var items: [(library: String, value: Double, label: String)] = []
            for library in ["strata", "grdb"] {
                guard let result = overhead.first(where: { $0.library == library && $0.parameter == count }),
                    let zero = overhead.first(where: { $0.library == library && $0.parameter == 0 }), zero.median > 0
                else { continue }
                let value = result.median / zero.median
                items.append((library, value, String(format: "%.3fx (%@ per write)", value, formatSeconds(result.median / Double(writes)))))
            }
            observationGroups.append(("\(count) observers", items))
        }
        let maxRatio = Swift.min(1.5, Swift.max(1.2, (observationGroups.flatMap { $0.items.map(\.value) }.max() ?? 1) * 1.05))
        body += bars(observationGroups, maxValue: maxRatio, reference: (1.05, "1.05"))
        y += 16
    }

    // Observation: latency and the fetch alone, in microseconds.
    let latency = observation.filter { $0.workload == "observation-latency" }
    if !latency.isEmpty {
        body += text(
            10, y + 4, "Observation latency: return of a one-row write to the consumer receiving the new value",
            attributes: "font-size=\"13\" font-weight=\"bold\"")
        y += 18
        body += text(
            10, y + 4, "median over \(latency[0].parameter) commits, in µs, next to the same fetch run alone in a read (lower is faster)",
            attributes: "fill=\"#555\"")
        y += 12
        body += legend(["strata", "grdb"], at: y)
        y += 24
        var latencyGroups: [(key: String, items: [(library: String, value: Double, label: String)])] = []
        latencyGroups.append(
            (
                "latency",
                latency.map {
                    ($0.library, $0.median * 1e6, String(format: "%.0f µs (%.1fx the fetch)", $0.median * 1e6, $0.median / $0.fetchMedian))
                }
            ))
        latencyGroups.append(
            (
                "from write call",
                latency.map { ($0.library, $0.fromWriteStartMedian * 1e6, String(format: "%.0f µs", $0.fromWriteStartMedian * 1e6)) }
            ))
        latencyGroups.append(
            ("fetch alone", latency.map { ($0.library, $0.fetchMedian * 1e6, String(format: "%.0f µs", $0.fetchMedian * 1e6)) }))
        let maxValue = (latencyGroups.flatMap { $0.items.map(\.value) }.max() ?? 1) * 1.1
        body += bars(latencyGroups, maxValue: maxValue, reference: nil)
    }
    y += 10

    return """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(y))" viewBox="0 0 \(Int(width)) \(Int(y))" font-family="Helvetica, Arial, sans-serif" font-size="11">
        <rect width="100%" height="100%" fill="white"/>

        """ + body + "</svg>\n"
}
