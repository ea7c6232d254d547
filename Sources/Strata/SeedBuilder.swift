import StrataSQLite

/// One record of a seed, with its type kept so that runs of one table can be grouped.
public struct SeedRecord {
    let record: any TableRecord
    let type: ObjectIdentifier

    init<Record: TableRecord>(_ record: Record) {
        self.record = record
        type = ObjectIdentifier(Record.self)
    }
}

/// Builds the list of records of `Database.seed(_:)`: records, arrays of records,
/// `if`, `switch` and `for` all work.
///
/// ```swift
/// try db.seed {
///     Game(id: gameID, title: "Family Game Night")
///     for name in ["Blob", "Blob Jr"] {
///         Player(id: uuid(), gameID: gameID, name: name)
///     }
/// }
/// ```
@resultBuilder
public enum SeedBuilder {
    public static func buildExpression<Record: TableRecord>(_ record: Record) -> [SeedRecord] {
        [SeedRecord(record)]
    }

    public static func buildExpression<Records: Sequence>(_ records: Records) -> [SeedRecord]
    where Records.Element: TableRecord {
        records.map { SeedRecord($0) }
    }

    public static func buildBlock(_ parts: [SeedRecord]...) -> [SeedRecord] {
        parts.flatMap { $0 }
    }

    public static func buildArray(_ parts: [[SeedRecord]]) -> [SeedRecord] {
        parts.flatMap { $0 }
    }

    public static func buildOptional(_ part: [SeedRecord]?) -> [SeedRecord] {
        part ?? []
    }

    public static func buildEither(first part: [SeedRecord]) -> [SeedRecord] {
        part
    }

    public static func buildEither(second part: [SeedRecord]) -> [SeedRecord] {
        part
    }

    public static func buildLimitedAvailability(_ part: [SeedRecord]) -> [SeedRecord] {
        part
    }
}
