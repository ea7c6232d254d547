import StrataSQLite

extension Database {
    /// Inserts records, typically a preview's or a test's starting data.
    ///
    /// ```swift
    /// try database.write { db in
    ///     try db.seed {
    ///         Game(id: game, title: "Family Game Night")
    ///         Player(id: blob, gameID: game, name: "Blob", score: 12)
    ///         Player(id: blobJr, gameID: game, name: "Blob Jr", score: 9)
    ///     }
    /// }
    /// ```
    ///
    /// Consecutive records of one table become one multi-row statement,
    /// `INSERT INTO players (…) VALUES (…), (…) ON CONFLICT DO NOTHING`, so seeding a few hundred
    /// rows costs a few statements rather than hundreds. Order the records parents first when
    /// foreign keys are enforced.
    ///
    /// **Seeding is idempotent.** A row whose primary key (or another UNIQUE value) is already
    /// stored is skipped, and the stored row is kept as it is: seeding the same records twice
    /// inserts nothing the second time. That is what a preview needs, since it runs its setup
    /// again (on the same named in-memory database) whenever its settings change. It holds as
    /// long as the seed's keys are the same each time: take IDs from `@Dependency(\.uuid)` set
    /// to a deterministic generator (`.incrementing`), never from `UUID()`. With new keys a
    /// second seed adds a second copy of rows that have no other UNIQUE column, or fails with a
    /// constraint error that names the statement (for example `FOREIGN KEY constraint failed`
    /// for children whose new parent was skipped as a duplicate title). Only uniqueness
    /// conflicts are skipped; a NOT NULL, CHECK or foreign key violation still throws.
    ///
    /// Call it inside a `write`, so a seed that fails part-way inserts nothing.
    ///
    /// - Returns: how many rows were inserted and skipped, and how many statements ran.
    @discardableResult
    public func seed(@SeedBuilder _ records: () throws -> [SeedRecord]) throws -> SeedSummary {
        var summary = SeedSummary()
        var run: [any TableRecord] = []
        var runType: ObjectIdentifier?
        for item in try records() {
            if item.type != runType, !run.isEmpty {
                try insertSeedRun(run, summary: &summary)
                run.removeAll(keepingCapacity: true)
            }
            runType = item.type
            run.append(item.record)
        }
        if !run.isEmpty {
            try insertSeedRun(run, summary: &summary)
        }
        return summary
    }

    private func insertSeedRun(_ run: [any TableRecord], summary: inout SeedSummary) throws {
        guard let first = run.first else { return }
        try insertSeedRun(first: first, run, summary: &summary)
    }

    /// Opens the existential of the run's first record, so the whole run is typed.
    private func insertSeedRun<Record: TableRecord>(first: Record, _ run: [any TableRecord], summary: inout SeedSummary) throws {
        let records = run.compactMap { $0 as? Record }
        let columnCount = Record.columnNames.count
        let table = Record.quotedTableName
        let columns = Record.columnNames.map(\.quotedIdentifier).joined(separator: ", ")
        let rowPlaceholder = "(" + Array(repeating: "?", count: columnCount).joined(separator: ", ") + ")"
        for chunk in bindingBatches(of: records, limit: maximumBindingCount, bindingCount: { _ in columnCount }) {
            var values: [any DatabaseValueConvertible] = []
            values.reserveCapacity(chunk.count * columnCount)
            for record in chunk {
                values.append(contentsOf: try record.databaseValues())
            }
            let rows = Array(repeating: rowPlaceholder, count: chunk.count).joined(separator: ", ")
            try execute(
                sql: "INSERT INTO \(table) (\(columns)) VALUES \(rows) ON CONFLICT DO NOTHING",
                arguments: StatementArguments(values))
            summary.insertedCount += changesCount
            summary.skippedCount += chunk.count - changesCount
            summary.statementCount += 1
        }
    }
}
