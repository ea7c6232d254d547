import BenchSupport
import Foundation
import StrataCloud
import StrataCloudWire

// The `wire` workload: what reading and writing the live cloud's JSON bodies costs a record, the
// work a first sync does on every record on the device and in the service, without a network,
// PostgreSQL or SQLite. A page of 2,000 records shaped like strata-cloud-bench's rows (a sealed
// record: one `strata.sealed` bytes field of 600 bytes, nine field versions of one timestamp, a
// parent for four in five; a plain record: the same ten columns as typed fields) is
// - page read: decoded as a client reads a fetched page (`CloudWire.decode`, the fast reader,
//   which keeps each record's text);
// - request read: a modify request of the same records decoded as the service reads it;
// - request write: the same request encoded as a client writes it.
// Each is the median of several rounds, in nanoseconds a record. Run under callgrind for
// instruction counts (Benchmarks/README.md, "Noise").
// Run: swift run -c release --package-path Benchmarks strata-bench --filter wire [--quick]

func runWireWorkloadIfSelected(_ options: Options) throws -> Bool {
    guard options.filters.contains("wire") else { return false }
    try WireWorkload(quick: options.quick).run()
    return options.filters.allSatisfy { $0 == "wire" }
}

struct WireWorkload {
    let quick: Bool

    static let zone = CloudZoneID(name: "strata.default", owner: "wire-bench-4c3f1a2b")
    static let version = HybridTimestamp(milliseconds: 1_796_690_995_755, counter: 60, node: "0b04bd8a-22be-5c3e-1eae-10b7143a1ef7")
    static let columns = ["project_id", "title", "position", "amount", "done", "payload", "comment", "due_at", "weight"]

    /// Record `index` of a page: sealed (one bytes field) or with its columns as typed fields.
    static func record(_ index: Int, sealed: Bool) -> CloudRecord {
        var generator = SplitMix(seed: UInt64(index))
        let key = String(format: "%08x-%04x-4%03x-8%03x-%012x", index, index & 0xffff, index & 0xfff, (index >> 3) & 0xfff, index * 7919)
        let isProject = index % 5 == 0
        let type = isProject ? "projects" : "tasks"
        var fields: [String: CloudValue] = [:]
        if sealed {
            fields["strata.sealed"] = .bytes(Data((0..<600).map { _ in UInt8(truncatingIfNeeded: generator.next()) }))
        } else {
            fields["project_id"] = .text("project-\(index / 5)")
            fields["title"] = .text("task \(index) of a project with a title of some length")
            fields["position"] = .integer(Int64(index))
            fields["amount"] = .real(Double(generator.next() % 1_000_000) / 100)
            fields["done"] = .integer(Int64(index % 2))
            fields["payload"] = .bytes(Data((0..<(16 + index % 48)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }))
            fields["comment"] = index % 3 == 0 ? .null : .text("a comment")
            fields["due_at"] = .integer(1_796_690_995 + Int64(index))
            fields["weight"] = index % 4 == 0 ? .null : .real(Double(index) / 7)
        }
        var versions: [String: HybridTimestamp] = [:]
        for column in columns { versions[column] = version }
        let parent = isProject ? nil : CloudRecordID(name: "project-\(index / 5):projects", zone: zone)
        return CloudRecord(
            id: CloudRecordID(name: "\(key):\(type)", zone: zone), type: type, fields: fields, fieldVersions: versions, parent: parent,
            changeTag: "t\(index)")
    }

    func run() throws {
        let count = 2_000
        let rounds = quick ? 5 : 15
        print("")
        print("wire — the live cloud's JSON bodies, \(count) records a body, median of \(rounds), ns a record")
        for sealed in [true, false] {
            let records = (0..<count).map { Self.record($0, sealed: sealed) }
            let page = try CloudWire.encode(
                ZoneChangesResponse(
                    CloudZoneChanges(changed: records, deleted: [], token: CloudChangeToken("\(count)"), moreComing: true)))
            let request = try CloudWire.encode(ModifyRecordsRequest(saving: records, deleting: []))
            var checksum = 0
            let pageRead = try Self.median(rounds) {
                checksum &+= try CloudWire.decode(ZoneChangesResponse.self, from: page).changed.count
            }
            let requestRead = try Self.median(rounds) {
                checksum &+= try CloudWire.decode(ModifyRecordsRequest.self, from: request).saving.count
            }
            let requestWrite = try Self.median(rounds) {
                checksum &+= try CloudWire.encode(ModifyRecordsRequest(saving: records, deleting: [])).count
            }
            guard checksum == rounds * count * 2 + rounds * request.count else {
                throw BenchFailure("wire: a body did not read back whole (checksum \(checksum))")
            }
            let kind = sealed ? "sealed" : "plain"
            let bytes = page.count / count
            for (name, seconds) in [("page read", pageRead), ("request read", requestRead), ("request write", requestWrite)] {
                let label = "\(name) (\(kind), \(bytes) B a record)"
                print(
                    "  \(label.padding(toLength: 44, withPad: " ", startingAt: 0)) \(String(format: "%8.0f", seconds / Double(count) * 1e9)) ns"
                )
            }
        }
    }

    /// The median time of `rounds` runs of `body`, in seconds.
    static func median(_ rounds: Int, _ body: () throws -> Void) throws -> Double {
        let clock = ContinuousClock()
        var times: [Double] = []
        for _ in 0..<rounds {
            let duration = try clock.measure(body)
            times.append(Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        }
        return times.sorted()[times.count / 2]
    }
}

/// A small deterministic generator, so every run reads the same bytes.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
