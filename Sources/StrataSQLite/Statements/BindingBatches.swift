// "Too many SQL variables": SQLite refuses a statement that binds more values than
// SQLITE_LIMIT_VARIABLE_NUMBER (`Database.maximumBindingCount`, 32,766 by default), which a
// multi-row `VALUES` of a few thousand records reaches. Whoever writes many rows at once splits
// them here, so every multi-row insert shares one rule.

/// The rows split into consecutive runs, each binding at most `limit - reserved` values (the
/// rest of the statement binds `reserved`). A run always has at least one row: a row that alone
/// exceeds the budget gets a run of its own, and SQLite reports it.
package func bindingBatches<Row>(
    of rows: [Row], limit: Int, reserved: Int = 0, bindingCount: (Row) -> Int
) -> [ArraySlice<Row>] {
    let budget = max(1, limit - reserved)
    var batches: [ArraySlice<Row>] = []
    var start = rows.startIndex
    var count = 0
    for index in rows.indices {
        let rowCount = bindingCount(rows[index])
        if index > start, count + rowCount > budget {
            batches.append(rows[start..<index])
            start = index
            count = 0
        }
        count += rowCount
    }
    if start < rows.endIndex { batches.append(rows[start...]) }
    return batches
}
