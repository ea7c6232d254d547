import CSQLite

/// The statements Strata generates for a ``TableRecord`` type.
@usableFromInline
enum RecordStatementKind: Hashable {
    case insert
    case insertOr(ConflictResolution)
    case insertReturning
    case upsert
    case update
    case delete
    case exists
    case selectAll
    case selectByKey
    case deleteByKey
}

/// Column positions of a record type, checked once per type and connection.
struct RecordLayout {
    let table: String
    let columns: [String]
    /// Written columns then generated ones: what every SELECT and RETURNING reads.
    let selectedColumns: [String]
    let primaryKeyPositions: [Int]
    let selectAll: String

    init<Record: TableRecord>(_ type: Record.Type) throws {
        table = Record.quotedTableName
        columns = Record.columnNames.map(\.quotedIdentifier)
        selectedColumns = Record.selectedColumnNames.map(\.quotedIdentifier)
        selectAll = Record.selectAllSQL
        var positions: [Int] = []
        for key in Record.primaryKeyColumnNames {
            guard let position = Record.columnNames.firstIndex(of: key) else {
                throw DatabaseError(
                    resultCode: .misuse,
                    message: "\(Record.self): primary key column \"\(key)\" is not in columnNames \(Record.columnNames)")
            }
            positions.append(position)
        }
        primaryKeyPositions = positions
    }

    /// Every column bound by number, so all statements bind the record's columns in the same
    /// order whatever subset they use.
    func sql(for kind: RecordStatementKind) -> String {
        let columnList = columns.joined(separator: ", ")
        let selectedList = selectedColumns.joined(separator: ", ")
        let parameters = columns.indices.map { "?\($0 + 1)" }.joined(separator: ", ")
        let keyCondition = primaryKeyPositions.map { "\(columns[$0]) = ?\($0 + 1)" }.joined(separator: " AND ")
        let nonKeyPositions = columns.indices.filter { !primaryKeyPositions.contains($0) }
        switch kind {
        case .insert:
            return "INSERT INTO \(table) (\(columnList)) VALUES (\(parameters))"
        case .insertOr(let resolution):
            return "INSERT OR \(resolution.rawValue) INTO \(table) (\(columnList)) VALUES (\(parameters))"
        case .insertReturning:
            return "INSERT INTO \(table) (\(columnList)) VALUES (\(parameters)) RETURNING \(selectedList)"
        case .upsert:
            let conflictTarget = primaryKeyPositions.map { columns[$0] }.joined(separator: ", ")
            let action =
                nonKeyPositions.isEmpty
                ? "DO NOTHING"
                : "DO UPDATE SET " + nonKeyPositions.map { "\(columns[$0]) = excluded.\(columns[$0])" }.joined(separator: ", ")
            return "INSERT INTO \(table) (\(columnList)) VALUES (\(parameters)) ON CONFLICT (\(conflictTarget)) \(action)"
        case .update:
            let assignments = nonKeyPositions.map { "\(columns[$0]) = ?\($0 + 1)" }.joined(separator: ", ")
            // A table made only of key columns has nothing to set; touching the key keeps the
            // statement valid and still reports whether the row exists.
            let set = assignments.isEmpty ? keyCondition.replacingOccurrences(of: " AND ", with: ", ") : assignments
            return "UPDATE \(table) SET \(set) WHERE \(keyCondition)"
        case .delete:
            return "DELETE FROM \(table) WHERE \(keyCondition)"
        case .exists:
            return "SELECT 1 FROM \(table) WHERE \(keyCondition)"
        case .selectAll:
            return selectAll
        case .selectByKey:
            let condition = primaryKeyPositions.enumerated().map { "\(columns[$0.element]) = ?\($0.offset + 1)" }.joined(separator: " AND ")
            return "SELECT \(selectedList) FROM \(table) WHERE \(condition)"
        case .deleteByKey:
            let condition = primaryKeyPositions.enumerated().map { "\(columns[$0.element]) = ?\($0.offset + 1)" }.joined(separator: " AND ")
            return "DELETE FROM \(table) WHERE \(condition)"
        }
    }
}

struct RecordStatementKey: Hashable {
    let type: ObjectIdentifier
    let kind: RecordStatementKind
}

/// A connection's record statements, with the last one looked up remembered: a loop of
/// inserts (or fetches by key) of one type compares two keys instead of hashing one per row.
struct RecordStatementCache {
    private var statements: [RecordStatementKey: Statement] = [:]
    private var last: (key: RecordStatementKey, statement: Statement)?

    mutating func statement(for key: RecordStatementKey) -> Statement? {
        if let last, last.key == key { return last.statement }
        guard let statement = statements[key] else { return nil }
        last = (key, statement)
        return statement
    }

    mutating func insertIfAbsent(_ statement: Statement, for key: RecordStatementKey) {
        if statements[key] == nil { statements[key] = statement }
    }

    mutating func removeAll() {
        statements.removeAll()
        last = nil
    }
}

extension Database {
    /// The prepared statement of one kind for one record type. Kept per connection, keyed by
    /// type, so the hot path hashes an `ObjectIdentifier` instead of SQL text. The table is
    /// bounded by the number of record types times the ten kinds.
    @usableFromInline
    func recordStatement<Record: TableRecord>(_ kind: RecordStatementKind, for type: Record.Type) throws -> Statement {
        confinement.check("a TableRecord method (insert, update, delete, upsert, exists, fetch by key)")
        let key = RecordStatementKey(type: ObjectIdentifier(type), kind: kind)
        if let statement = recordStatements.statement(for: key), !statement.isBusy {
            return statement
        }
        let statement = try makeStatement(sql: RecordLayout(type).sql(for: kind))
        recordStatements.insertIfAbsent(statement, for: key)
        return statement
    }

    func runRecordStatement<Record: TableRecord, Result>(
        _ statement: Statement, encoding record: Record, _ body: (Statement) throws -> Result
    ) throws -> Result {
        try statement.willExecute()
        statement.isBusy = true
        defer {
            sqlite3_reset(statement.handle)
            statement.isBusy = false
        }
        var encoder = ColumnEncoder(statement: statement)
        try record.encodeColumns(to: &encoder)
        if encoder.failure != SQLITE_OK {
            var capture = ColumnEncoder(capturingFor: statement)
            try? record.encodeColumns(to: &capture)
            throw error(code: encoder.failure, sql: statement.sql, arguments: StatementArguments(capture.captured ?? []))
        }
        if encoder.count != Record.columnNames.count {
            throw DatabaseError(
                resultCode: .misuse,
                message: "\(Record.self).encodeColumns appended \(encoder.count) value(s) for \(Record.columnNames.count) column(s)",
                sql: statement.sql)
        }
        do {
            return try body(statement)
        } catch var error as DatabaseError {
            var capture = ColumnEncoder(capturingFor: statement)
            try? record.encodeColumns(to: &capture)
            error.arguments = StatementArguments(capture.captured ?? [])
            throw error
        }
    }

    func executeRecordStatement<Record: TableRecord>(_ kind: RecordStatementKind, for type: Record.Type, encoding record: Record) throws {
        let statement = try recordStatement(kind, for: type)
        try runRecordStatement(statement, encoding: record) { statement in
            while try statement.step(arguments: []) {}
        }
    }
}
