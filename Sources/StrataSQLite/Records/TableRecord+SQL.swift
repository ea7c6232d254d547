// How SQL text names a record's table, written once for every module that builds statements.

extension TableRecord {
    /// `"schema"."table"`, or `"table"` without a ``schemaName``: how a statement names the
    /// table it reads or writes.
    package static var quotedTableName: String {
        guard let schemaName else { return tableName.quotedIdentifier }
        return schemaName.quotedIdentifier + "." + tableName.quotedIdentifier
    }

    /// `SELECT <every selected column> FROM "table"`: every row, in the order `init(row:)`
    /// decodes its columns.
    package static var selectAllSQL: String {
        "SELECT " + selectedColumnNames.map(\.quotedIdentifier).joined(separator: ", ") + " FROM " + quotedTableName
    }
}
