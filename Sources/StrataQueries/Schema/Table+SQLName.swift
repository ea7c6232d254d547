import StrataSQLite

extension Table {
    /// `"schema"."table"` (`"table"` without a `TableRecord.schemaName`): how
    /// every statement names the table it reads or writes.
    package static var tableFragment: QueryFragment {
        QueryFragment(verbatim: quotedTableName)
    }

    /// `"table"` alone, for the table a trigger's step writes. SQLite refuses a schema there
    /// ("qualified table names are not allowed on INSERT, UPDATE, and DELETE statements within
    /// triggers"); a temporary trigger's steps find the table through the usual search order
    /// (temp, main, then attached databases).
    static var triggerStepTableFragment: QueryFragment {
        QueryFragment(quoting: tableName)
    }
}
