/// What `Database.seed(_:)` did.
public struct SeedSummary: Sendable, Hashable, CustomStringConvertible {
    /// Rows inserted.
    public var insertedCount: Int
    /// Rows left out because a row with the same primary key (or another UNIQUE value) was
    /// there already: a re-run seed skips every row.
    public var skippedCount: Int
    /// `INSERT` statements run: one per run of consecutive records of one table (more only when
    /// a run has more values than one statement can bind).
    public var statementCount: Int

    public init(insertedCount: Int = 0, skippedCount: Int = 0, statementCount: Int = 0) {
        self.insertedCount = insertedCount
        self.skippedCount = skippedCount
        self.statementCount = statementCount
    }

    public var description: String {
        "\(insertedCount) row(s) inserted, \(skippedCount) already there, in \(statementCount) statement(s)"
    }
}
