import StrataSQLite

// A select of one table turned into a write of the rows it finds.
//
// Only the select's filters (`where`, `find`) carry over. The conversion is declared for
// selects without joins only (`Joins == ()`), so updating or deleting a joined select does not
// compile. A select with a limit, an offset, a grouping or a `HAVING` is refused at run time
// (the statement throws a `DatabaseError` with result code `.misuse` and executes nothing),
// since dropping them would write other rows than the select finds. The selected columns, the
// order and `DISTINCT` do not change which rows match and are dropped.
extension Select where Joins == () {
    /// `UPDATE "table" SET … WHERE <this select's filters>`.
    ///
    /// ```swift
    /// Player.where { $0.gameID.eq(1) }.update { $0.score += 1 }
    /// Player.find(id).update { $0.score = 0; $0.name = "x" }
    /// ```
    public func update(
        or resolution: ConflictResolution? = nil,
        set assignments: (inout Updates<From>) -> Void
    ) -> Update<From, ()> {
        var updates = Updates<From>()
        assignments(&updates)
        let filter = writableFilter(of: self, statement: "UPDATE")
        return Update(resolution: resolution, updates: updates, wheres: filter.wheres, failure: filter.failure)
    }

    /// `DELETE FROM "table" WHERE <this select's filters>`.
    ///
    /// ```swift
    /// Player.where { $0.score < 5 }.delete()
    /// Player.find(id).delete()
    /// ```
    public func delete() -> Delete<From, ()> {
        let filter = writableFilter(of: self, statement: "DELETE FROM")
        return Delete(wheres: filter.wheres, failure: filter.failure)
    }
}
