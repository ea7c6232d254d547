import CSQLite

/// A scalar SQL function implemented by a Swift closure.
///
/// ```swift
/// let slugify = DatabaseFunction("slugify", deterministic: true) { (title: String) in
///     title.lowercased().replacingOccurrences(of: " ", with: "-")
/// }
/// try db.add(function: slugify)
/// try String.fetchOne(db, sql: "SELECT slugify(title) FROM games")
/// ```
///
/// Arguments are decoded into the closure's parameter types; an argument that cannot be
/// decoded (TEXT for an `Int`, NULL for a non-optional) fails the statement with an error that
/// names the function, the argument and the value. A closure that throws fails the statement
/// with the error's description.
public final class DatabaseFunction: Sendable {
    /// The SQL name.
    public let name: String
    /// The number of arguments, or nil for any number.
    public let argumentCount: Int?
    /// Whether the function always gives the same result for the same arguments, which lets
    /// SQLite use it in indexes and generated columns and factor calls out of loops.
    public let isDeterministic: Bool
    let body: @Sendable ([DatabaseValue]) throws -> DatabaseValue

    /// A function over raw values.
    public init(
        _ name: String, argumentCount: Int?, deterministic: Bool = false,
        _ body: @escaping @Sendable ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?
    ) {
        self.name = name
        self.argumentCount = argumentCount
        self.isDeterministic = deterministic
        self.body = { arguments in try body(arguments)?.databaseValue ?? .null }
    }

    /// A function with typed arguments and result.
    public convenience init<each Argument: DatabaseValueConvertible, Result: DatabaseValueConvertible>(
        _ name: String, deterministic: Bool = false,
        _ body: @escaping @Sendable (repeat each Argument) throws -> Result
    ) {
        var count = 0
        for _ in repeat (each Argument).self { count += 1 }
        self.init(name, argumentCount: count, deterministic: deterministic) { values in
            var index = 0
            func next<Value: DatabaseValueConvertible>(_ type: Value.Type) throws -> Value {
                defer { index += 1 }
                let value = values[index]
                guard let decoded = Value.fromDatabaseValue(value) else {
                    throw FunctionArgumentError(function: name, index: index, value: value, expectedType: "\(Value.self)")
                }
                return decoded
            }
            return try body(repeat next((each Argument).self))
        }
    }
}

/// An argument of a ``DatabaseFunction`` could not be decoded into the closure's parameter type.
public struct FunctionArgumentError: Error, CustomStringConvertible {
    /// The function's SQL name.
    public var function: String
    /// The argument's position, from 0.
    public var index: Int
    /// The value SQL passed.
    public var value: DatabaseValue
    /// The Swift type the closure declared.
    public var expectedType: String

    /// Names the function, the argument, its value and the type that was expected.
    public var description: String {
        "\(function)(): argument \(index + 1) is \(value.storageClassName) \(value), expected \(expectedType)"
    }
}

extension Database {
    /// Installs a function on this connection. In a pool, add functions in
    /// `Configuration.prepareDatabase` so every connection has them.
    public func add(function: DatabaseFunction) throws {
        confinement.check("Database.add(function:)")
        var flags = SQLITE_UTF8
        if function.isDeterministic { flags |= SQLITE_DETERMINISTIC }
        let box = Unmanaged.passRetained(function).toOpaque()
        let code = sqlite3_create_function_v2(
            handle, function.name, Int32(function.argumentCount ?? -1), flags, box,
            { context, count, values in
                guard let context else { return }
                let function = Unmanaged<DatabaseFunction>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue()
                var arguments: [DatabaseValue] = []
                arguments.reserveCapacity(Int(count))
                for index in 0..<Int(count) {
                    if let value = values?[index] {
                        arguments.append(DatabaseValue(sqliteValue: value))
                    } else {
                        arguments.append(.null)
                    }
                }
                do {
                    try function.body(arguments).setResult(of: context)
                } catch {
                    sqlite3_result_error(context, "\(error)", -1)
                }
            },
            nil, nil,
            { box in
                if let box { Unmanaged<DatabaseFunction>.fromOpaque(box).release() }
            })
        if code != SQLITE_OK {
            // SQLite calls the destructor itself when registration fails.
            throw DatabaseError(connection: handle, code: code, sql: "add function \(function.name)")
        }
    }

    /// Removes a function added with ``add(function:)``.
    public func remove(function: DatabaseFunction) throws {
        confinement.check("Database.remove(function:)")
        var flags = SQLITE_UTF8
        if function.isDeterministic { flags |= SQLITE_DETERMINISTIC }
        let code = sqlite3_create_function_v2(
            handle, function.name, Int32(function.argumentCount ?? -1), flags, nil, nil, nil, nil, nil)
        if code != SQLITE_OK {
            throw DatabaseError(connection: handle, code: code, sql: "remove function \(function.name)")
        }
    }
}

extension DatabaseValue {
    func setResult(of context: OpaquePointer) {
        switch self {
        case .null: sqlite3_result_null(context)
        case .integer(let value): sqlite3_result_int64(context, value)
        case .real(let value): sqlite3_result_double(context, value)
        case .text(let text):
            var text = text
            text.withUTF8 { buffer in
                guard let base = buffer.baseAddress, buffer.count > 0 else {
                    sqlite3_result_text(context, "", 0, sqliteTransient)
                    return
                }
                base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                    sqlite3_result_text64(context, $0, sqlite3_uint64(buffer.count), sqliteTransient, UInt8(SQLITE_UTF8))
                }
            }
        case .blob(let data):
            data.withUnsafeBytes { buffer in
                if let base = buffer.baseAddress, buffer.count > 0 {
                    sqlite3_result_blob64(context, base, sqlite3_uint64(buffer.count), sqliteTransient)
                } else {
                    sqlite3_result_zeroblob(context, 0)
                }
            }
        }
    }
}
