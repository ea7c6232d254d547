import CSQLite

/// A lazy sequence of decoded rows, stepping the statement one row per call to ``next()``.
///
/// Memory stays constant whatever the size of the result. A cursor is only valid inside the
/// database closure that created it — ``next()`` outside of it stops the process, as using an
/// escaped ``Database`` does; it resets its statement when it reaches the end, throws, or is
/// released.
public final class RecordCursor<Element> {
    private let statement: Statement
    /// The statement's, held here: loaded through `statement` it would be retained and
    /// released on every row.
    private let confinement: AccessConfinement
    private let arguments: StatementArguments
    private let decode: (Row) throws -> Element
    private var isDone = false

    init(statement: Statement, arguments: StatementArguments, decode: @escaping (Row) throws -> Element) throws {
        self.statement = statement
        self.confinement = statement.confinement
        self.arguments = arguments
        self.decode = decode
        try statement.willExecute()
        statement.isBusy = true
        do {
            try arguments.bind(to: statement)
        } catch {
            finish()
            throw error
        }
    }

    deinit {
        finish()
    }

    /// The next element, or nil at the end.
    public func next() throws -> Element? {
        guard !isDone else { return nil }
        // Once per row: a cursor steps its statement between calls of the caller's code, which
        // can hand it to another thread or return it from the closure.
        confinement.check("RecordCursor.next()", sql: self.statement.sql)
        do {
            guard try statement.step(arguments: arguments) else {
                finish()
                return nil
            }
            return try decode(Row(statement: statement))
        } catch {
            finish()
            throw error
        }
    }

    /// Calls `body` with every remaining element.
    public func forEach(_ body: (Element) throws -> Void) throws {
        while let element = try next() {
            try body(element)
        }
    }

    /// Collects the remaining elements.
    public func collect() throws -> [Element] {
        var elements: [Element] = []
        while let element = try next() {
            elements.append(element)
        }
        return elements
    }

    private func finish() {
        guard !isDone else { return }
        isDone = true
        sqlite3_reset_statement(statement)
    }
}

private func sqlite3_reset_statement(_ statement: Statement) {
    sqlite3_reset(statement.handle)
    statement.isBusy = false
}
