import CSQLite

/// Values bound to a statement's parameters: positional (`?`, `?NNN`) or named (`:name`,
/// `@name`, `$name`).
///
/// ```swift
/// try db.execute(sql: "INSERT INTO players (name, score) VALUES (?, ?)", arguments: ["Blob", 10])
/// try db.execute(sql: "UPDATE players SET score = :score WHERE id = :id", arguments: [":score": 11, ":id": 1])
/// ```
public struct StatementArguments: Sendable, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// Values for `?` and `?NNN` parameters, in order.
    public var positional: [any DatabaseValueConvertible]
    /// Values for `:name`, `@name` and `$name` parameters; names are given without the prefix.
    public var named: [(name: String, value: any DatabaseValueConvertible)]
    /// Set when the same arguments serve several statements of one SQL string.
    var ignoresUnknownNames = false

    /// Positional arguments.
    public init(_ values: [any DatabaseValueConvertible] = []) {
        positional = values
        named = []
    }

    /// Named arguments, as (name, value) pairs, names without their prefix.
    public init(named: [(name: String, value: any DatabaseValueConvertible)]) {
        positional = []
        self.named = named
    }

    /// Positional arguments: `[1, "Ann"]`.
    public init(arrayLiteral elements: (any DatabaseValueConvertible)...) {
        self.init(elements)
    }

    /// Named arguments: `["name": "Ann"]`.
    public init(dictionaryLiteral elements: (String, any DatabaseValueConvertible)...) {
        self.init(named: elements.map { (name: $0.0, value: $0.1) })
    }

    /// Whether there is no argument at all.
    public var isEmpty: Bool { positional.isEmpty && named.isEmpty }

    /// The arguments as SQL literals, for error messages.
    public var description: String {
        if named.isEmpty {
            return "[" + positional.map { $0.databaseValue.description }.joined(separator: ", ") + "]"
        }
        let positionalPart = positional.map { $0.databaseValue.description }
        let namedPart = named.map { "\($0.name): \($0.value.databaseValue)" }
        return "[" + (positionalPart + namedPart).joined(separator: ", ") + "]"
    }

    /// Binds every value; the statement's parameter count must match the positional count.
    ///
    /// With named arguments, a parameter that is not named is NULL, as in SQLite: the cached
    /// statement's bindings are cleared first, since `sqlite3_reset` keeps them ("Bindings
    /// are not cleared by the sqlite3_reset() routine") and the previous execution's value
    /// would silently be used again.
    func bind(to statement: Statement) throws {
        let handle = statement.handle
        let parameterCount = Int(sqlite3_bind_parameter_count(handle))
        if !named.isEmpty { sqlite3_clear_bindings(handle) }
        if named.isEmpty, positional.count != parameterCount {
            throw DatabaseError(
                resultCode: .range,
                message: "wrong number of arguments: the statement has \(parameterCount) parameter(s), \(positional.count) given",
                sql: statement.sql, arguments: self)
        }
        for (offset, value) in positional.enumerated() {
            let code = value.bind(to: handle, at: Int32(offset + 1))
            if code != SQLITE_OK {
                throw DatabaseError(connection: sqlite3_db_handle(handle), code: code, sql: statement.sql, arguments: self)
            }
        }
        for (name, value) in named {
            var index = sqlite3_bind_parameter_index(handle, name)
            if index == 0, let first = name.first, !":@$".contains(first) {
                index = sqlite3_bind_parameter_index(handle, ":" + name)
            }
            if index == 0, ignoresUnknownNames { continue }
            guard index > 0 else {
                throw DatabaseError(
                    resultCode: .range, message: "no parameter named \(name) in the statement",
                    sql: statement.sql, arguments: self)
            }
            let code = value.bind(to: handle, at: index)
            if code != SQLITE_OK {
                throw DatabaseError(connection: sqlite3_db_handle(handle), code: code, sql: statement.sql, arguments: self)
            }
        }
    }
}
