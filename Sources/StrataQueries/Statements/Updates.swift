/// The assignments of an `UPDATE … SET` (or an upsert's `DO UPDATE SET`), written as Swift
/// assignments to the table's columns.
///
/// ```swift
/// Player.update {
///     $0.score += 1                        // "score" = ("players"."score" + ?)
///     $0.gameID = 2                        // "gameID" = ?
///     $0.nickname = nil                    // "nickname" = ?   (binds NULL)
///     $0.name = $0.name.upper()            // any expression of the column's type
/// }
/// ```
///
/// Reading a column gives its expression, so the right side of an assignment can use any
/// column of the row. The closure reads like Swift: a column assigned earlier in the closure
/// reads as its new expression, so `$0.score += 1; $0.score *= 2` sets
/// `"score" = (("players"."score" + ?) * ?)`, and assigning a column twice keeps one assignment.
///
/// A column takes any expression of its type: a Swift value (bound), another column, an
/// operator's result, `#sql`. An optional column also takes `nil` (NULL) and expressions of its
/// wrapped type (`$0.nickname = $0.name`). Compound assignments: `+=`, `-=`, `*=`, `/=` on
/// numeric columns, `+=` (concatenation, `||`) on text columns.
@dynamicMemberLookup
public struct Updates<Root: Table>: Sendable {
    struct Assignment: Sendable {
        let column: String
        var value: QueryFragment
    }

    var assignments: [Assignment] = []

    init() {}

    /// Whether nothing has been assigned.
    public var isEmpty: Bool { assignments.isEmpty }

    /// `"column" = value, …`.
    var setList: QueryFragment {
        assignments.map { QueryFragment(quoting: $0.column) + " = " + $0.value }.joined(separator: ", ")
    }

    mutating func assign(_ column: String, _ value: QueryFragment) {
        if let index = assignments.firstIndex(where: { $0.column == column }) {
            assignments[index].value = value
        } else {
            assignments.append(Assignment(column: column, value: value))
        }
    }

    func current<Value>(_ column: TableColumn<Root, Value>) -> SQLQueryExpression<Value> {
        guard let assignment = assignments.first(where: { $0.column == column.name }) else {
            return SQLQueryExpression(column.queryFragment)
        }
        return SQLQueryExpression(assignment.value.parenthesizedOperand)
    }

    /// A column: reads as its expression (or the expression assigned to it earlier), and
    /// assigning an expression built from columns and operators sets it:
    /// `$0.score = $0.score * 2`.
    public subscript<Value>(
        dynamicMember keyPath: KeyPath<Root.TableColumns, TableColumn<Root, Value>>
    ) -> SQLQueryExpression<Value> {
        get { current(Root.columns[keyPath: keyPath]) }
        set { assign(Root.columns[keyPath: keyPath].name, newValue.queryFragment) }
    }

    /// A column assigned any expression of its type: a value (`$0.score = 0`), a column of
    /// the same type, `#sql`; and the target of `+=` and friends.
    @_disfavoredOverload
    public subscript<Value>(
        dynamicMember keyPath: KeyPath<Root.TableColumns, TableColumn<Root, Value>>
    ) -> any QueryExpression<Value> {
        get { current(Root.columns[keyPath: keyPath]) }
        set { assign(Root.columns[keyPath: keyPath].name, newValue.queryFragment) }
    }

    /// An optional column assigned an expression of its wrapped type: `$0.nickname = $0.name`.
    @_disfavoredOverload
    public subscript<Wrapped>(
        dynamicMember keyPath: KeyPath<Root.TableColumns, TableColumn<Root, Wrapped?>>
    ) -> any QueryExpression<Wrapped> {
        get { SQLQueryExpression<Wrapped>(current(Root.columns[keyPath: keyPath]).queryFragment) }
        set { assign(Root.columns[keyPath: keyPath].name, newValue.queryFragment) }
    }
}

extension SQLQueryExpression: ExpressibleByNilLiteral where QueryValue: OptionalProtocol {
    /// NULL, bound as a parameter: what `$0.nickname = nil` assigns.
    public init(nilLiteral: ()) {
        self.init(QueryFragment(binding: .null))
    }
}

/// `column = column + value`.
public func += <Value: QueryNumeric>(lhs: inout any QueryExpression<Value>, rhs: some QueryExpression<Value>) {
    lhs = binary(lhs, "+", rhs) as SQLQueryExpression<Value>
}

/// `column = column - value`.
public func -= <Value: QueryNumeric>(lhs: inout any QueryExpression<Value>, rhs: some QueryExpression<Value>) {
    lhs = binary(lhs, "-", rhs) as SQLQueryExpression<Value>
}

/// `column = column * value`.
public func *= <Value: QueryNumeric>(lhs: inout any QueryExpression<Value>, rhs: some QueryExpression<Value>) {
    lhs = binary(lhs, "*", rhs) as SQLQueryExpression<Value>
}

/// `column = column / value` (integer division for integer columns, as in SQLite).
public func /= <Value: QueryNumeric>(lhs: inout any QueryExpression<Value>, rhs: some QueryExpression<Value>) {
    lhs = binary(lhs, "/", rhs) as SQLQueryExpression<Value>
}

/// `column = column || text`: appends to a text column.
public func += (lhs: inout any QueryExpression<String>, rhs: some QueryExpression<String>) {
    lhs = binary(lhs, "||", rhs) as SQLQueryExpression<String>
}
