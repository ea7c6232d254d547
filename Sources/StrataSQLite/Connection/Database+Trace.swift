import CSQLite

/// One statement reported to a trace (``Database/trace(includingTriggers:_:)``).
public struct TraceEvent: Sendable, CustomStringConvertible {
    /// The SQL as written, with `?` placeholders; for a trigger, SQLite's `-- TRIGGER name` line.
    public var sql: String
    /// The SQL with bound values substituted (`sqlite3_expanded_sql`); equal to `sql` for triggers.
    public var expandedSQL: String
    /// Whether the event is a statement run by a trigger (SQLite reports those as `--` lines).
    public var isTrigger: Bool
    /// The connection's description (label and role).
    public var connection: String

    /// The SQL with its values, as ``expandedSQL``.
    public var description: String { expandedSQL }
}

/// Identifies a trace added with ``Database/addTrace(includingTriggers:_:)``, to remove it.
public struct TraceID: Hashable, Sendable {
    let rawValue: Int
}

/// The traces of one connection. SQLite has one trace slot; this fans it out.
struct TraceListeners {
    struct Listener {
        var id: Int
        var includingTriggers: Bool
        var body: (TraceEvent) -> Void
    }

    var listeners: [Listener] = []
    var isInstalled = false

    mutating func removeAll(from handle: OpaquePointer) {
        listeners.removeAll()
        if isInstalled {
            sqlite3_trace_v2(handle, 0, nil, nil)
            isInstalled = false
        }
    }
}

extension Database {
    /// The id of the trace installed by ``trace(includingTriggers:_:)``, which replaces itself.
    private static let mainTraceID = 0

    /// Reports every statement the connection starts, with its bound values expanded.
    ///
    /// Statements run by triggers arrive as `-- TRIGGER name` lines; they are dropped unless
    /// `includingTriggers` is true. Calling it again replaces the previous trace; pass `nil` to
    /// stop it. Traces added with ``addTrace(includingTriggers:_:)`` are not affected. In a
    /// pool, install traces in `Configuration.prepareDatabase` to see every connection.
    public func trace(includingTriggers: Bool = false, _ body: ((TraceEvent) -> Void)?) {
        confinement.check("Database.trace(includingTriggers:_:)")
        traces.listeners.removeAll { $0.id == Self.mainTraceID }
        if let body {
            traces.listeners.insert(.init(id: Self.mainTraceID, includingTriggers: includingTriggers, body: body), at: 0)
        }
        updateTraceInstallation()
    }

    /// Adds a trace beside the others: every trace of the connection receives every statement.
    /// Use it from code that must not replace the application's own trace.
    @discardableResult
    public func addTrace(includingTriggers: Bool = false, _ body: @escaping (TraceEvent) -> Void) -> TraceID {
        confinement.check("Database.addTrace(includingTriggers:_:)")
        let id = nextListenerID
        nextListenerID += 1
        traces.listeners.append(.init(id: id, includingTriggers: includingTriggers, body: body))
        updateTraceInstallation()
        return TraceID(rawValue: id)
    }

    /// Removes a trace added with ``addTrace(includingTriggers:_:)``.
    public func removeTrace(_ id: TraceID) {
        confinement.check("Database.removeTrace(_:)")
        traces.listeners.removeAll { $0.id == id.rawValue }
        updateTraceInstallation()
    }

    private func updateTraceInstallation() {
        if traces.listeners.isEmpty {
            traces.removeAll(from: handle)
            return
        }
        guard !traces.isInstalled else { return }
        traces.isInstalled = true
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_trace_v2(
            handle, UInt32(SQLITE_TRACE_STMT),
            { _, context, statement, text in
                guard let context, let statement else { return 0 }
                let database = Unmanaged<Database>.fromOpaque(context).takeUnretainedValue()
                database.reportTrace(statement: OpaquePointer(statement), text: text)
                return 0
            }, context)
    }

    private func reportTrace(statement: OpaquePointer, text: UnsafeMutableRawPointer?) {
        let unexpanded = text.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? ""
        let isTrigger = unexpanded.hasPrefix("--")
        let listeners = traces.listeners.filter { !isTrigger || $0.includingTriggers }
        guard !listeners.isEmpty else { return }
        var expanded = unexpanded
        if !isTrigger, let pointer = sqlite3_expanded_sql(statement) {
            expanded = String(cString: pointer)
            sqlite3_free(pointer)
        }
        let event = TraceEvent(sql: unexpanded, expandedSQL: expanded, isTrigger: isTrigger, connection: description)
        for listener in listeners {
            listener.body(event)
        }
    }
}
