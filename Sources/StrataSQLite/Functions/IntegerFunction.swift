import CSQLite

/// The arguments of an integer function (``Database/addIntegerFunction(named:argumentCount:_:)``),
/// read in place.
package struct IntegerFunctionArguments {
    fileprivate let values: UnsafeMutablePointer<OpaquePointer?>?
    /// How many arguments SQL passed.
    package let count: Int

    /// Argument `index` when SQL passed an integer; nil for any other value, or past the last
    /// argument.
    package func int64(at index: Int) -> Int64? {
        guard index >= 0, index < count, let value = values?[index], sqlite3_value_type(value) == SQLITE_INTEGER else {
            return nil
        }
        return sqlite3_value_int64(value)
    }
}

/// The closure of one integer function, kept alive by SQLite while the function is installed.
private final class IntegerFunctionBody {
    let body: @Sendable (IntegerFunctionArguments) -> Int64?
    init(_ body: @escaping @Sendable (IntegerFunctionArguments) -> Int64?) { self.body = body }
}

extension Database {
    /// Installs a SQL function whose result is an integer, or NULL when `body` answers nil,
    /// replacing any function of that name and argument count.
    ///
    /// Why not a ``DatabaseFunction``: that one makes an array of ``DatabaseValue`` and boxes
    /// its result on every call, which is most of what a function costs. Capture triggers call
    /// their functions on every row a synced table gains, where those calls measured about
    /// 0.4 µs a row, a third of what capture added to an insert.
    package func addIntegerFunction(
        named name: String, argumentCount: Int32, _ body: @escaping @Sendable (IntegerFunctionArguments) -> Int64?
    ) throws {
        confinement.check("Database.addIntegerFunction(named:)")
        let box = Unmanaged.passRetained(IntegerFunctionBody(body)).toOpaque()
        let code = sqlite3_create_function_v2(
            handle, name, argumentCount, SQLITE_UTF8, box,
            { context, count, values in
                guard let context else { return }
                // Borrowed, not retained: SQLite holds the body until the function is removed.
                let result = Unmanaged<IntegerFunctionBody>.fromOpaque(sqlite3_user_data(context))._withUnsafeGuaranteedRef {
                    $0.body(IntegerFunctionArguments(values: values, count: Int(count)))
                }
                if let result {
                    sqlite3_result_int64(context, result)
                } else {
                    sqlite3_result_null(context)
                }
            },
            nil, nil,
            { box in
                if let box { Unmanaged<IntegerFunctionBody>.fromOpaque(box).release() }
            })
        if code != SQLITE_OK {
            // SQLite calls the destructor itself when registration fails.
            throw DatabaseError(connection: handle, code: code, sql: "add function \(name)")
        }
    }
}
