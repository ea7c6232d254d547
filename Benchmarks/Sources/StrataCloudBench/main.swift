import BenchSupport
import Foundation

// strata-cloud-bench: issue #27's sync targets, measured and written as JSON and a chart.
// The live cloud runs in child processes of this same executable (`serve`, `device`), over a
// PostgreSQL server it may create a database on:
//   swift run -c release --package-path Benchmarks strata-cloud-bench [options] postgres://postgres@127.0.0.1:5432/postgres
// (Tests/postgres.sh start DIR prints such a URL.) Benchmarks/README.md describes each phase.

setvbuf(stdout, nil, _IOLBF, 0)
let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "serve":
        guard arguments.count == 2, let url = URL(string: arguments[1]) else {
            throw BenchFailure("usage: strata-cloud-bench serve DATABASE-URL")
        }
        try await ServeCommand.run(databaseURL: url)
    case "device":
        try await DeviceCommand.run(Array(arguments.dropFirst()))
    default:
        try await BenchRun.run(try Options.parse(arguments))
    }
} catch {
    FileHandle.standardError.write(Data("strata-cloud-bench: \(error)\n".utf8))
    exit(1)
}
