import StrataSQLite

// Pieces shared by INSERT, UPDATE and DELETE.

/// Several conditions joined with AND. When there are several, each is parenthesized unless it
/// already is (as every comparison the builder writes is): `("a" = ?) AND ("b" < ?)`.
func conjunction(_ conditions: [QueryFragment]) -> QueryFragment {
    if conditions.count == 1 { return conditions[0] }
    return conditions.map(\.parenthesizedOperand).joined(separator: " AND ")
}

/// ` OR IGNORE` and friends, or nothing.
func conflictResolutionClause(_ resolution: ConflictResolution?) -> String {
    resolution.map { " OR " + $0.rawValue } ?? ""
}

/// ` RETURNING a, b`, or nothing.
func returningClause(_ returning: [QueryFragment]) -> QueryFragment {
    guard !returning.isEmpty else { return QueryFragment() }
    return " RETURNING " + returning.joined(separator: ", ")
}

/// The condition of a write whose record failed to encode. Running the statement throws the
/// encoding error before any SQL runs; the condition only keeps its text from reading as a valid
/// write (`WHERE 0` would write nothing, silently, wherever the text ran unchecked): SQLite
/// refuses `RAISE` outside a trigger when preparing, and aborts the trigger step evaluating it.
func unencodableRecordCondition<Root: Table>(_ root: Root.Type, _ error: any Error) -> QueryFragment {
    QueryFragment(verbatim: "RAISE(ABORT, " + "\(Root.self) failed to encode: \(error)".quotedSQLLiteral + ")")
}

/// The condition `"table"."key" = ?` for a row's encoded values, written as `find(id)` writes
/// it so both share a prepared statement.
func primaryKeyCondition<Root: PrimaryKeyedTable>(_ root: Root.Type, values: [DatabaseValue]) throws -> QueryFragment {
    let key = Root.columns.primaryKey
    guard let position = Root.columnNames.firstIndex(of: key.name), position < values.count else {
        throw DatabaseError(
            resultCode: .misuse,
            message: "\(Root.self): primary key column \"\(key.name)\" is not in columnNames \(Root.columnNames)")
    }
    return key.eq(SQLQueryExpression<Root.TableColumns.PrimaryKey>(QueryFragment(binding: values[position]))).queryFragment
}

/// The `WHERE` of a select that an update or delete reuses. Only filters carry over: a limit,
/// an offset, a grouping or a `HAVING` would change which rows are written, and SQLite's
/// UPDATE and DELETE have no such clauses, so they are refused (ordering and the selected
/// columns do not matter and are dropped).
func writableFilter<Columns, From>(
    of select: Select<Columns, From, ()>, statement: String
) -> (wheres: [QueryFragment], failure: (any Error)?) {
    var refused: [String] = []
    if select.limit != nil || select.offset != nil { refused.append("LIMIT/OFFSET") }
    if !select.groups.isEmpty { refused.append("GROUP BY") }
    if !select.havings.isEmpty { refused.append("HAVING") }
    guard refused.isEmpty else {
        return (
            select.wheres,
            DatabaseError(
                resultCode: .misuse,
                message:
                    "\(statement) \(From.quotedTableName) cannot keep the select's \(refused.joined(separator: ", ")): only its WHERE carries over",
                sql: select.sql)
        )
    }
    return (select.wheres, nil)
}

extension QueryFragment {
    /// The fragment, parenthesized unless it is a single `?` or already one parenthesized group,
    /// so it can be an operand of another operator.
    var parenthesizedOperand: QueryFragment {
        if sql == "?" || sql.isSingleParenthesizedGroup { return self }
        return "(" + self + ")"
    }
}

extension String {
    /// Whether the text is `( … )` with the first parenthesis closing at the very end, outside
    /// quoted strings and identifiers.
    fileprivate var isSingleParenthesizedGroup: Bool {
        guard first == "(", last == ")" else { return false }
        let lastOffset = count - 1
        var depth = 0
        var quote: Character?
        for (offset, character) in enumerated() {
            if let open = quote {
                if character == open { quote = nil }
                continue
            }
            switch character {
            case "'", "\"", "`": quote = character
            case "(": depth += 1
            case ")":
                depth -= 1
                if depth == 0 { return offset == lastOffset }
            default: break
            }
        }
        return false
    }
}
