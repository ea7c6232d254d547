import BenchSupport
import Foundation

/// The command line of a measuring run.
struct Options {
    static let phases = ["first", "million", "engine", "push", "devices", "latency"]

    var serverURL: URL?
    var rows = 100_000
    var millionRows = 1_000_000
    var engineRows: Int?
    var devices = 20
    var rowsPerDevice = 1_000
    var pushSamples = 100
    var idleDevices = 100
    var pushRows = 10_000
    var latencyRows = 30_000
    var roundTrips = [20, 80]
    var only = Set(phases)
    var jsonPath: String?
    var svgPath: String?

    static let usage = """
        usage: strata-cloud-bench [POSTGRES-URL] [--rows N] [--million-rows N] [--engine-rows N] [--devices N]
                                  [--rows-per-device N] [--push-samples N] [--idle-devices N] [--push-rows N]
                                  [--latency-rows N] [--rtt-ms MS,MS...]
                                  [--only first,million,engine,push,devices,latency] [--json PATH] [--svg PATH]

          POSTGRES-URL        a server it may create a database on (default: $STRATA_TEST_POSTGRES);
                              without one, only the engine phase runs
          --rows N            first sync: rows (default 100000)
          --million-rows N    the memory phase: rows (default 1000000; 0 skips it)
          --engine-rows N     engine vs MockCloud: rows (default: --rows)
          --devices N         devices sending at once (default 20)
          --rows-per-device N rows each of them sends (default 1000)
          --push-samples N    push latency samples (default 100)
          --push-rows N       rows both push devices hold before the clock starts (default 10000)
          --idle-devices N    idle devices holding a change-hint stream meanwhile (default 100)
          --latency-rows N    first sync over a long link: rows (default 30000)
          --rtt-ms MS,MS...   the long links' round trips in milliseconds (default 20,80)
          --only PHASES       only these phases, comma-separated
          --json PATH         write the results as JSON
          --svg PATH          write a chart of each target: measured value against the target
        Devices encrypt end to end, as engines do by default; STRATA_BENCH_ENCRYPTION=off runs
        the push and devices phases without (first and engine measure both anyway).
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var iterator = arguments.makeIterator()
        func count(_ flag: String) throws -> Int {
            guard let text = iterator.next(), let value = Int(text.replacingOccurrences(of: "_", with: "")), value >= 0 else {
                throw BenchFailure("\(flag) needs a count\n\(usage)")
            }
            return value
        }
        func path(_ flag: String) throws -> String {
            guard let text = iterator.next() else { throw BenchFailure("\(flag) needs a path\n\(usage)") }
            return text
        }
        while let argument = iterator.next() {
            switch argument {
            case "--rows": options.rows = try count(argument)
            case "--million-rows": options.millionRows = try count(argument)
            case "--engine-rows": options.engineRows = try count(argument)
            case "--devices": options.devices = try count(argument)
            case "--rows-per-device": options.rowsPerDevice = try count(argument)
            case "--push-samples": options.pushSamples = try count(argument)
            case "--idle-devices": options.idleDevices = try count(argument)
            case "--push-rows": options.pushRows = try count(argument)
            case "--latency-rows": options.latencyRows = try count(argument)
            case "--rtt-ms":
                let texts = try path(argument).split(separator: ",")
                let values = texts.compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
                guard !values.isEmpty, values.count == texts.count, values.allSatisfy({ $0 > 0 && $0 <= 10_000 }) else {
                    throw BenchFailure("--rtt-ms needs round trips of 1 to 10000 ms, comma-separated\n\(usage)")
                }
                options.roundTrips = values
            case "--json": options.jsonPath = try path(argument)
            case "--svg": options.svgPath = try path(argument)
            case "--only":
                let names = try path(argument).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                if let unknown = names.first(where: { !phases.contains($0) }) { throw BenchFailure("unknown phase \(unknown)\n\(usage)") }
                options.only = Set(names)
            case "-h", "--help":
                print(usage)
                exit(0)
            case let text where text.hasPrefix("postgres://") || text.hasPrefix("postgresql://"):
                options.serverURL = URL(string: text)
            default:
                throw BenchFailure("unknown argument \(argument)\n\(usage)")
            }
        }
        if options.serverURL == nil, let text = ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES"], !text.isEmpty {
            options.serverURL = URL(string: text)
        }
        if options.millionRows == 0 { options.only.remove("million") }
        return options
    }

    func runs(_ phase: String) -> Bool { only.contains(phase) }
}
