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
    /// primary keys may.
    init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        let table = String(text[text.index(after: colon)...])
        guard !table.isEmpty else { return nil }
        self.init(table: table, primaryKey: String(text[..<colon]))
    }
}
