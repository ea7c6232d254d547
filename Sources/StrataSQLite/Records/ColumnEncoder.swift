import CSQLite

/// Receives a record's column values, in the order of its `columnNames`, and binds each one
/// straight to the statement's parameter of the same position (no intermediate array).
public struct ColumnEncoder {
    /// Nil for an encoder that only captures (``TableRecord/databaseValues()``).
    @usableFromInline let handle: OpaquePointer?
    @usableFromInline let parameterCount: Int32
    @usableFromInline var index: Int32 = 0
    @usableFromInline var failure: Int32 = SQLITE_OK
    /// Set only when re-encoding a record to report its values in an error.
    @usableFromInline var captured: [DatabaseValue]?

    init(statement: Statement) {
        handle = statement.handle
        parameterCount = sqlite3_bind_parameter_count(statement.handle)
    }

    /// An encoder that binds nothing and records the values.
    init(capturingFor statement: Statement) {
        handle = statement.handle
        parameterCount = 0
        captured = []
    }

    /// An encoder that binds nothing and records the values, with no statement at all: read
    /// them from ``capturedValues``.
    package init() {
        handle = nil
        parameterCount = 0
        captured = []
    }

    /// Appends the value of the next column.
    @inlinable
    public mutating func append(_ value: some DatabaseValueConvertible) {
        index += 1
        captured?.append(value.databaseValue)
        // Statements that only use some columns (DELETE uses the key) reference them by
        // number (`?3`); parameters beyond the highest referenced one do not exist.
        guard index <= parameterCount, let handle else { return }
        let code = value.bind(to: handle, at: index)
        if code != SQLITE_OK, failure == SQLITE_OK { failure = code }
    }

    var count: Int { Int(index) }

    /// The values appended so far, for an encoder made with ``init()``.
    package var capturedValues: [DatabaseValue] { captured ?? [] }
}
