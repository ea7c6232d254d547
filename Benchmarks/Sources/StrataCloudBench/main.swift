import Foundation

// strata-cloud-bench: the live cloud measured end to end on loopback, against PostgreSQL doing
// the same work raw. Needs a PostgreSQL server it may create databases on:
//   swift run -c release --package-path Benchmarks strata-cloud-bench postgres://postgres@127.0.0.1:5432/postgres
// (Tests/postgres.sh start DIR prints such a URL.) See Documentation/Cloud.md for results.

setvbuf(stdout, nil, _IOLBF, 0)
guard let text = CommandLine.arguments.dropFirst().first ?? ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES"],
    let serverURL = URL(string: text)
else {
    FileHandle.standardError.write(Data("usage: strata-cloud-bench postgres://user@host:port/database\n".utf8))
    exit(2)
}
let rows = Int(ProcessInfo.processInfo.environment["STRATA_CLOUD_BENCH_ROWS"] ?? "") ?? 10_000
let bench = try await CloudBench.start(serverURL: serverURL)
print("strata-cloud-bench: service and store in this process, PostgreSQL on \(serverURL.host ?? "?"), loopback HTTP")
try await FirstSync.run(bench, rows: rows)
try await PushLatency.run(bench, samples: 100)
try await ConcurrentDevices.run(bench, devices: 20, rowsPerDevice: 500)
try await bench.stop()
