import CSQLite

/// One statement reported by ``Database/trace(includingTriggers:_:)``.
public struct TraceEvent: Sendable, CustomStringConvertible {
    /// The SQL as written, with `?` placeholders; for a trigger, SQLite's `-- TRIGGER name` line.
    public var sql: String
    /// The SQL with bound values substituted (`sqlite3_expanded_sql`); equal to `sql` for triggers.
    public var expandedSQL: String
    /// Whether the event is a statement run by a trigger (SQLite reports those as `--` lines).
    public var isTrigger: Bool
    /// The connection's description (label and role).
    public var connection: String

    public var description: String { expandedSQL }
}

final class TraceBox {
    let includingTriggers: Bool
    let connection: String
    let body: (TraceEvent) -> Void

    init(includingTriggers: Bool, connection: String, body: @escaping (TraceEvent) -> Void) {
        self.includingTriggers = includingTriggers
        self.connection = connection
        self.body = body
    }
}

extension Database {
    /// Reports every statement the connection starts, with its bound values expanded.
    ///
    /// Statements run by triggers arrive as `-- TRIGGER name` lines; they are dropped unless
    /// `includingTriggers` is true. Pass `nil` to stop tracing. In a pool, install traces in
    /// `Configuration.prepareDatabase` to see every connection.
    public func trace(includingTriggers: Bool = false, _ body: ((TraceEvent) -> Void)?) {
        traceBoxStorage?.release()
        traceBoxStorage = nil
        guard let body else {
            sqlite3_trace_v2(handle, 0, nil, nil)
            return
        }
        let box = Unmanaged.passRetained(TraceBox(includingTriggers: includingTriggers, connection: description, body: body))
        traceBoxStorage = box
        sqlite3_trace_v2(handle, UInt32(SQLITE_TRACE_STMT), { _, context, statement, text in
            guard let context, let statement else { return 0 }
            let box = Unmanaged<TraceBox>.fromOpaque(context).takeUnretainedValue()
            let unexpanded = text.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? ""
            let isTrigger = unexpanded.hasPrefix("--")
            if isTrigger && !box.includingTriggers { return 0 }
            var expanded = unexpanded
            if !isTrigger, let pointer = sqlite3_expanded_sql(OpaquePointer(statement)) {
                expanded = String(cString: pointer)
                sqlite3_free(pointer)
            }
            box.body(TraceEvent(sql: unexpanded, expandedSQL: expanded, isTrigger: isTrigger, connection: box.connection))
            return 0
        }, box.toOpaque())
    }
}
