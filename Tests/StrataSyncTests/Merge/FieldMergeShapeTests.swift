import StrataCloud
import Testing

@testable import StrataSync

/// `FieldMerge.merge` against the rule written out column by column, over random shapes:
/// records new here that carry every column (the shortcut that shares the record's own
/// dictionaries), and every shape beside it (a missing field or version, an extra field, a
/// local version, a row that exists).
@Suite(.timeLimit(.minutes(2))) struct FieldMergeShapeTests {
    /// The rule, one column at a time, as the documentation states it.
    static func reference(
        columns: [String], localVersions: [String: HybridTimestamp], incoming: CloudRecord, rowExists: Bool
    )
        -> FieldMerge.Outcome
    {
        var outcome = FieldMerge.Outcome()
        for column in columns {
            let local = localVersions[column]
            guard let value = incoming.fields[column] else {
                if let local { outcome.versions[column] = local }
                if rowExists, local != nil { outcome.localWins = true }
                continue
            }
            let remote = incoming.fieldVersions[column]
            let localIsLater = local.map { local in remote.map { $0 < local } ?? true } ?? false
            if rowExists, localIsLater, let local {
                outcome.versions[column] = local
                outcome.localWins = true
            } else {
                outcome.incomingWins[column] = value
                if let remote { outcome.versions[column] = remote }
            }
        }
        return outcome
    }

    @Test func everyShapeMergesAsTheRuleSays() {
        var generator = SystemRandomNumberGenerator()
        let columns = ["a", "b", "c", "d", "title", "é"]
        var shortcuts = 0
        for _ in 0..<3_000 {
            func version() -> HybridTimestamp {
                HybridTimestamp(
                    milliseconds: Int64.random(in: 1...3, using: &generator), counter: UInt32.random(in: 0...1, using: &generator),
                    node: ["x", "y"].randomElement(using: &generator) ?? "x")
            }
            let whole = Bool.random(using: &generator)
            var fields: [String: CloudValue] = [:]
            var versions: [String: HybridTimestamp] = [:]
            for column in columns where whole || Int.random(in: 0..<5, using: &generator) > 0 {
                fields[column] = .integer(Int64.random(in: 0...9, using: &generator))
                if whole || Int.random(in: 0..<5, using: &generator) > 0 { versions[column] = version() }
            }
            if !whole, Bool.random(using: &generator) {
                fields["extra"] = .text("from a newer app")
                versions["extra"] = version()
            }
            var localVersions: [String: HybridTimestamp] = [:]
            if Int.random(in: 0..<3, using: &generator) == 0 {
                for column in columns where Bool.random(using: &generator) { localVersions[column] = version() }
            }
            let rowExists = Bool.random(using: &generator)
            let record = CloudRecord(
                id: CloudRecordID(name: "r:t", zone: CloudZoneID(name: "z", owner: "o")), type: "t", fields: fields,
                fieldVersions: versions)
            if !rowExists, localVersions.isEmpty, fields.count == columns.count, versions.count == columns.count {
                shortcuts += 1
            }
            let merged = FieldMerge.merge(columns: columns, localVersions: localVersions, incoming: record, rowExists: rowExists)
            let expected = Self.reference(columns: columns, localVersions: localVersions, incoming: record, rowExists: rowExists)
            #expect(merged == expected, "\(record) local \(localVersions) rowExists \(rowExists)")
        }
        // Both paths ran, many times.
        #expect(shortcuts > 300)
    }

    @Test func aRecordWithAnExtraFieldKeepsOnlyTheSyncedColumns() {
        let version = HybridTimestamp(milliseconds: 5, counter: 0, node: "x")
        let record = CloudRecord(
            id: CloudRecordID(name: "r:t", zone: CloudZoneID(name: "z", owner: "o")), type: "t",
            fields: ["a": .integer(1), "extra": .integer(2)], fieldVersions: ["a": version, "extra": version])
        let merged = FieldMerge.merge(columns: ["a", "b"], localVersions: [:], incoming: record, rowExists: false)
        #expect(merged.incomingWins == ["a": .integer(1)])
        #expect(merged.versions == ["a": version])
    }
}
