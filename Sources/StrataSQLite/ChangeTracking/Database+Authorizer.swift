import CSQLite

extension Database {
    /// Installs the authorizer that every connection keeps for its whole life.
    ///
    /// SQLite calls it while a statement is prepared (never while it runs), so its cost is paid
    /// once per prepared statement and cached statements pay nothing. It does three things:
    /// - records the tables and columns a statement reads into ``Statement/readRegion``;
    /// - on writers, records the tables a statement writes, announced whenever it runs;
    /// - on writers, answers `SQLITE_IGNORE` to `SQLITE_DELETE`. SQLite documents that this
    ///   "disables the truncate optimization": `DELETE FROM t` without `WHERE` otherwise empties
    ///   the table without calling the update hook, and observers would never hear of it.
    func installAuthorizer() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_set_authorizer(
            handle,
            { context, action, first, second, schema, trigger in
                guard let context else { return SQLITE_OK }
                let database = Unmanaged<Database>.fromOpaque(context).takeUnretainedValue()
                let builtIn = database.authorize(action: action, first, second, schema)
                if database.authorizers.isEmpty { return builtIn }
                return database.askAuthorizers(builtIn, action: action, first, second, schema, trigger)
            }, context)
    }

    /// Strata's own answer: records reads and writes, keeps the truncate optimization off.
    private func authorize(
        action: Int32, _ first: UnsafePointer<CChar>?, _ second: UnsafePointer<CChar>?, _ schema: UnsafePointer<CChar>?
    ) -> Int32 {
        let database = self
        switch action {
        case SQLITE_READ:
            if database.preparingRegion != nil, let first {
                let table = QualifiedTable(schema: schema.map { String(cString: $0) }, name: String(cString: first))
                database.preparingRegion?.insert(table, column: second.map { String(cString: $0) } ?? "")
            }
            return SQLITE_OK
        case SQLITE_DROP_TABLE, SQLITE_DROP_TEMP_TABLE, SQLITE_DROP_VIEW, SQLITE_DROP_TEMP_VIEW, SQLITE_DROP_VTABLE:
            // SQLite follows this with a SQLITE_DELETE of the same table, answered below.
            database.tableBeingDropped = first.map { String(cString: $0) }
            return SQLITE_OK
        case SQLITE_INSERT, SQLITE_UPDATE:
            database.recordWrite(schema: schema, table: first)
            return SQLITE_OK
        case SQLITE_DELETE:
            database.recordWrite(schema: schema, table: first)
            // DROP statements also authorize a SQLITE_DELETE, of the schema table and of the
            // dropped table, and there SQLITE_IGNORE does not mean "no truncate
            // optimization" but "skip the drop": the statement would succeed without
            // dropping anything.
            let table = first.map { String(cString: $0) }
            if let dropped = database.tableBeingDropped, table == dropped {
                database.tableBeingDropped = nil
                return SQLITE_OK
            }
            if let table, table.hasPrefix("sqlite_") { return SQLITE_OK }
            return database.disablesTruncateOptimization ? SQLITE_IGNORE : SQLITE_OK
        default:
            return SQLITE_OK
        }
    }

    /// Records a table the statement being prepared writes (writers only).
    ///
    /// The update hook misses some changes: rows of `WITHOUT ROWID` tables, rows deleted by
    /// `REPLACE` conflict resolution. Announcing the tables a statement writes whenever it runs
    /// covers them, at the price of a redundant announcement when the statement changes no row.
    private func recordWrite(schema: UnsafePointer<CChar>?, table: UnsafePointer<CChar>?) {
        guard preparingWrites != nil, let table else { return }
        preparingWrites?.insert(QualifiedTable(schema: schema.map { String(cString: $0) }, name: String(cString: table)))
    }

    /// Runs `body` and returns the region read by every statement it executed.
    ///
    /// Nested calls work: the outer recording receives the inner region too.
    public func recordingReadRegion<T>(_ body: () throws -> T) rethrows -> (value: T, region: DatabaseRegion) {
        confinement.check("Database.recordingReadRegion(_:)")
        let outer = regionRecorder
        regionRecorder = DatabaseRegion()
        defer {
            if let outer {
                regionRecorder = outer.union(regionRecorder ?? DatabaseRegion())
            } else {
                regionRecorder = nil
            }
        }
        let value = try body()
        return (value, regionRecorder ?? DatabaseRegion())
    }
}
