/// A synced row's name in the cloud, `"<primary key>:<table>"`, as SQLiteData names records.
struct RecordName: Hashable, Sendable {
    var table: String
    var primaryKey: String

    var text: String { "\(primaryKey):\(table)" }

    init(table: String, primaryKey: String) {
        self.table = table
        self.primaryKey = primaryKey
    }

    /// Splits on the last colon: table names never contain one (the schema rules refuse it),
    /// primary keys may. By bytes: a table name starting with a combining mark makes one
    /// `Character` of the colon before it.
    init?(_ text: String) {
        let bytes = text.utf8
        guard let colon = bytes.lastIndex(of: UInt8(ascii: ":")) else { return nil }
        let table = String(decoding: bytes[bytes.index(after: colon)...], as: UTF8.self)
        guard !table.isEmpty else { return nil }
        self.init(table: table, primaryKey: String(decoding: bytes[..<colon], as: UTF8.self))
    }

    /// Equal when table and key have the same bytes: SQLite keeps canonically equivalent
    /// keys apart, and so must the records that stand for them.
    static func == (lhs: RecordName, rhs: RecordName) -> Bool {
        lhs.primaryKey.hasSameBytes(as: rhs.primaryKey) && lhs.table.hasSameBytes(as: rhs.table)
    }

    func hash(into hasher: inout Hasher) {
        primaryKey.hashBytes(into: &hasher)
        table.hashBytes(into: &hasher)
    }
}
