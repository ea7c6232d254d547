import StrataSQLite

/// A `SELECT` statement: built from a table (`Player.all`, `Player.where { … }`), refined by
/// chaining, run with `fetchAll(db)` / `fetchOne(db)` / `fetchCount(db)`.
///
/// - `Columns`: what a row decodes to — the table, a tuple of tables after joins, or what
///   `select` chose.
/// - `From`: the table in `FROM`.
/// - `Joins`: the joined tables, as a tuple; a `LEFT JOIN`ed table appears as an optional.
///
/// Query closures receive one argument per table, in join order: `{ $0.id.eq($1.gameID) }`.
public struct Select<Columns, From: Table, Joins>: QueryStatement {
    public typealias QueryValue = Columns

    @usableFromInline
    var isDistinct = false
    /// The select list; nil while it is `all`'s, every column of the table decoded as `From`,
    /// whose text the table keeps (``TableDefinition/selectionFragment``).
    @usableFromInline
    var chosenSelection: [QueryFragment]?
    var selection: [QueryFragment] {
        chosenSelection ?? [From.TableColumns.selectionFragment]
    }
    @usableFromInline
    var joins: [QueryFragment] = []
    /// `find(id)`'s condition, kept as the key until something needs its SQL: a bare key lookup
    /// then runs as the table's cached by-key statement (see `fetchOne`) without building text.
    @usableFromInline
    var primaryKeyLookup: PrimaryKeyLookup?
    @usableFromInline
    var otherWheres: [QueryFragment] = []
    /// Every condition, in order; the key lookup's (always first: `find` starts from `all`)
    /// turns into SQL here, and setting them settles it for good.
    var wheres: [QueryFragment] {
        get {
            guard let primaryKeyLookup else { return otherWheres }
            return [primaryKeyLookup.condition] + otherWheres
        }
        set {
            primaryKeyLookup = nil
            otherWheres = newValue
        }
    }
    @usableFromInline
    var groups: [QueryFragment] = []
    @usableFromInline
    var havings: [QueryFragment] = []
    @usableFromInline
    var orders: [QueryFragment] = []
    @usableFromInline
    var limit: QueryFragment?
    @usableFromInline
    var offset: QueryFragment?

    @inlinable
    init(selection: [QueryFragment]?) {
        chosenSelection = selection
    }

    init<OtherColumns, OtherJoins>(copying other: Select<OtherColumns, From, OtherJoins>, selection: [QueryFragment]? = nil) {
        isDistinct = other.isDistinct
        chosenSelection = selection ?? other.chosenSelection
        joins = other.joins
        primaryKeyLookup = other.primaryKeyLookup
        otherWheres = other.otherWheres
        groups = other.groups
        havings = other.havings
        orders = other.orders
        limit = other.limit
        offset = other.offset
    }

    public var statementFragment: QueryFragment {
        var fragment = QueryFragment(verbatim: isDistinct ? "SELECT DISTINCT " : "SELECT ")
        fragment.append(selection.joined(separator: ", "))
        fragment.append(verbatim: " FROM ")
        fragment.append(From.tableFragment)
        for join in joins {
            fragment.append(verbatim: " ")
            fragment.append(join)
        }
        if !wheres.isEmpty {
            fragment.append(verbatim: " WHERE ")
            fragment.append(conjunction(wheres))
        }
        if !groups.isEmpty {
            fragment.append(verbatim: " GROUP BY ")
            fragment.append(groups.joined(separator: ", "))
        }
        if !havings.isEmpty {
            fragment.append(verbatim: " HAVING ")
            fragment.append(conjunction(havings))
        }
        if !orders.isEmpty {
            fragment.append(verbatim: " ORDER BY ")
            fragment.append(orders.joined(separator: ", "))
        }
        if let limit {
            fragment.append(verbatim: " LIMIT ")
            fragment.append(limit)
            if let offset {
                fragment.append(verbatim: " OFFSET ")
                fragment.append(offset)
            }
        } else if let offset {
            // SQLite needs a LIMIT before OFFSET; -1 means no limit.
            fragment.append(verbatim: " LIMIT -1 OFFSET ")
            fragment.append(offset)
        }
        return fragment
    }
}

extension Select: Sendable {}

extension Table {
    /// Every row of the table: `SELECT <every column> FROM "table"`.
    @inlinable
    public static var all: Select<Self, Self, ()> {
        Select(selection: nil)
    }
}
