import StrataSQLite

/// The statements the engine runs on a synced table once per record, written once per table.
///
/// Building them for every record (quoting each column, joining the lists) was a tenth of
/// applying a page of records and of building a batch to send; texts built once also reach the
/// statement cache as the same text every time.
struct TableSQL: Sendable, Hashable {
    /// The synced columns other than the primary key, in declaration order.
    let valueColumns: [String]
    /// The value columns of the row with a primary key (the one argument), in order.
    let selectValues: String
    /// One row when the row with a primary key exists.
    let selectExists: String
    /// The parent column of the row with a primary key, as text.
    let selectParentKeyText: String?
    /// Inserts a row: the primary key, then every value column.
    let insertAll: String
    /// Where the parent column is among ``valueColumns``.
    let parentValueIndex: Int?
    /// The value columns with their declared type's affinity, checked against every incoming
    /// value: parsing each declared type again for every record was 3 % of applying a page.
    let affinities: [TypedColumn]

    struct TypedColumn: Sendable, Hashable {
        let name: String
        let declaredType: String
        let affinity: ColumnAffinity
    }

    init(name: String, primaryKey: String, columns: [SyncedTable.Column], parent: SyncedTable.ParentReference?) {
        valueColumns = columns.map(\.name).filter { $0 != primaryKey }
        let table = "main.\(name.quotedIdentifier)"
        let key = primaryKey.quotedIdentifier
        let selection = valueColumns.isEmpty ? "1" : valueColumns.map(\.quotedIdentifier).joined(separator: ", ")
        selectValues = "SELECT \(selection) FROM \(table) WHERE \(key) = ?"
        selectExists = "SELECT 1 FROM \(table) WHERE \(key) = ?"
        selectParentKeyText = parent.map { "SELECT CAST(\($0.column.quotedIdentifier) AS TEXT) FROM \(table) WHERE \(key) = ?" }
        insertAll = Self.insert(into: name, primaryKey: primaryKey, columns: valueColumns)
        parentValueIndex = parent.flatMap { [valueColumns] parent in valueColumns.firstIndex(of: parent.column) }
        affinities = columns.filter { $0.name != primaryKey }.map {
            TypedColumn(name: $0.name, declaredType: $0.declaredType, affinity: ColumnAffinity(declaredType: $0.declaredType))
        }
    }

    /// Inserts a row: the primary key, then `columns`.
    static func insert(into name: String, primaryKey: String, columns: [String]) -> String {
        let names = ([primaryKey] + columns).map(\.quotedIdentifier).joined(separator: ", ")
        let marks = Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")
        return "INSERT INTO main.\(name.quotedIdentifier) (\(names)) VALUES (\(marks))"
    }
}
