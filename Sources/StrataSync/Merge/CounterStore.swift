import StrataSQLite

/// Counter states in the metadatabase (``MetadatabaseTable/counters``), and the step of the
/// change log's drain that gives local edits of counter columns to this device's lane.
enum CounterStore {
    /// A record's state of one counter column, if the engine keeps one.
    static func load(_ name: RecordName, column: String, in db: Database) throws -> CounterState? {
        guard
            let text = try String.fetchOne(
                db,
                sql:
                    "SELECT state FROM \(MetadatabaseTable.counters.qualifiedName) WHERE recordType = ? AND recordPrimaryKey = ? AND columnName = ?",
                arguments: [name.table, name.primaryKey, column])
        else { return nil }
        do {
            return try SyncJSON.decode(CounterState.self, from: text)
        } catch {
            throw CounterMergeError.malformedState(table: name.table, column: column, primaryKey: name.primaryKey, detail: "\(error)")
        }
    }

    static func save(_ state: CounterState, of name: RecordName, column: String, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO \(MetadatabaseTable.counters.qualifiedName) (recordType, recordPrimaryKey, columnName, state)
                VALUES (?, ?, ?, ?) ON CONFLICT (recordType, recordPrimaryKey, columnName) DO UPDATE SET state = excluded.state
                """,
            arguments: [name.table, name.primaryKey, column, try SyncJSON.encode(state)])
    }

    /// Forgets a record's counter states: the next incoming copy is taken as it is.
    static func forget(_ name: RecordName, in db: Database) throws {
        try db.execute(
            sql: "DELETE FROM \(MetadatabaseTable.counters.qualifiedName) WHERE recordType = ? AND recordPrimaryKey = ?",
            arguments: [name.table, name.primaryKey])
    }

    /// What a record says of a counter column, for ``CounterMerge``.
    static func incoming(_ record: CloudRecord, column: String) -> CounterMerge.Incoming {
        CounterMerge.Incoming(
            value: record.fields[column], state: record.fields[CounterState.fieldName(of: column)],
            version: record.fieldVersions[column])
    }

    /// The typed error for a failure of a record's counter column.
    static func error(_ failure: CounterMerge.Failure, name: RecordName, column: String) -> CounterMergeError {
        switch failure {
        case .overflow: .overflow(table: name.table, column: column, primaryKey: name.primaryKey)
        case .notAnInteger(let value): .notAnInteger(table: name.table, column: column, primaryKey: name.primaryKey, value: value)
        case .malformedState(let detail): .malformedState(table: name.table, column: column, primaryKey: name.primaryKey, detail: detail)
        }
    }

    /// Gives the local edits of counter columns that a drain batch found to this device's
    /// lanes, in the drain's transaction (the lanes and the drain's mark commit together, so
    /// an edit is counted once).
    ///
    /// - Parameters:
    ///   - touched: per record, the counter columns the batch's saves set, with the version of
    ///     the earliest such save (a row with no state yet starts from it).
    ///   - metadata: the batch's metadata, for the last known server record.
    /// - Throws: ``CounterMergeError`` naming the row whose value is not an integer or whose
    ///   contributions would overflow: the drain stops, nothing is lost, and the next one
    ///   goes on once the value is fixed.
    static func recordLocalEdits(
        _ touched: [RecordName: [String: HybridTimestamp]], metadata: [RecordName: RecordMetadata], schema: SyncSchema,
        clock: HybridLogicalClock, in db: Database
    ) throws {
        guard !touched.isEmpty else { return }
        for (name, columns) in touched.sorted(by: { $0.key.text < $1.key.text }) {
            guard let table = schema.table(named: name.table) else { continue }
            let sortedColumns = columns.keys.sorted()
            // A row deleted later in the batch has nothing to count.
            guard
                let values = try db.fetchOne(
                    sql:
                        "SELECT \(sortedColumns.map(\.quotedIdentifier).joined(separator: ", ")) FROM main.\(table.name.quotedIdentifier) WHERE \(table.primaryKey.quotedIdentifier) = ?",
                    arguments: [name.primaryKey],
                    { row in try (0..<sortedColumns.count).map { try row[$0] as DatabaseValue } })
            else { continue }
            let lastKnown = try metadata[name]?.serverRecord()
            for (column, value) in zip(sortedColumns, values) {
                guard let created = columns[column] else { continue }
                let stored = try load(name, column: column, in: db)
                let known: CounterState?
                let state: CounterState
                do throws(CounterMerge.Failure) {
                    known = try CounterMerge.knownState(stored: stored, lastKnown: lastKnown.map { incoming($0, column: column) })
                    state = try CounterMerge.afterLocalEdit(
                        known: known, value: value, createdVersion: created, device: clock.node, nextVersion: clock.next)
                } catch {
                    throw Self.error(error, name: name, column: column)
                }
                if state != stored { try save(state, of: name, column: column, in: db) }
            }
        }
        // Lanes carry versions from the clock: the clock's last reading commits with them, so
        // a restart never issues an older version to this device's lane.
        try EngineState.set(EngineState.lastTimestamp, to: clock.lastTimestamp.description, in: db)
    }
}
