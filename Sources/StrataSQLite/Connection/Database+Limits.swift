import CSQLite

extension Database {
    /// The most values one statement can bind (`SQLITE_LIMIT_VARIABLE_NUMBER`: 32,766 by
    /// default since SQLite 3.32; builds may differ). Statements that bind many rows at once
    /// split themselves to stay under it.
    public var maximumBindingCount: Int {
        confinement.check("Database.maximumBindingCount")
        return Int(sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
    }
}
