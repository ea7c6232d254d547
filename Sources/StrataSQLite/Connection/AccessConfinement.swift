import Synchronization

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The access that lends a connection to a closure: named in the error reported when the
/// connection is used outside of it.
enum AccessKind: UInt8, Sendable {
    /// No access has run yet: the connection is being opened and prepared.
    case opening
    case read
    case write
    case writeWithoutTransaction
    case barrierWriteWithoutTransaction
    case asyncRead
    case readAfterCommit

    var methodName: String {
        switch self {
        case .opening: "Configuration.prepareDatabase"
        case .read: "read"
        case .write: "write"
        case .writeWithoutTransaction: "writeWithoutTransaction"
        case .barrierWriteWithoutTransaction: "barrierWriteWithoutTransaction"
        case .asyncRead: "asyncRead"
        case .readAfterCommit: "readAfterCommit"
        }
    }
}

/// Which thread may use a connection now: the thread running the access its queue or pool
/// granted, or, before the connection is handed to one, the thread opening it.
///
/// `SQLITE_OPEN_NOMUTEX` and the unchecked exclusivity of `Database`'s hot properties rely on
/// the connection being confined to its accesses; nothing in the type system stops a closure
/// from letting its `Database` escape (`let db = try pool.read { $0 }`), so every entry point
/// that touches the connection compares the current thread with the one recorded here. A
/// thread rather than a flag: an escaped connection is usually used while its queue or pool
/// runs another access on it (a queue has a single connection), which a flag would let
/// through.
///
/// Shared by a `Database` and its statements, so that a statement or cursor checks without
/// loading its unowned connection.
final class AccessConfinement: Sendable {
    /// The thread that may use the connection, 0 for none.
    ///
    /// Relaxed loads and stores suffice: the check only has to tell "this thread" from every
    /// other value, and a thread always sees its own latest store. Only the owning thread ever
    /// stores its own identifier, and clears it before its access ends, so no other thread can
    /// load a value equal to its own identifier: a stale value still fails the comparison.
    private let thread: Atomic<UInt>
    /// The access running now or, once it has ended, the last one: for the error message only.
    private let kind = Atomic<UInt8>(AccessKind.opening.rawValue)
    /// The connection's description, for the error message.
    let connection: String

    /// Confined to the calling thread, which opens and prepares the connection.
    init(connection: String) {
        self.connection = connection
        thread = Atomic(currentThreadIdentifier())
    }

    /// The queue or pool took the connection: from now on only its accesses may use it.
    func release() {
        thread.store(0, ordering: .relaxed)
    }

    /// Confines the connection to the calling thread for an access; returns what
    /// ``end(restoring:)`` restores.
    func begin(_ access: AccessKind) -> (thread: UInt, kind: UInt8) {
        let previousThread = thread.exchange(currentThreadIdentifier(), ordering: .relaxed)
        let previousKind = kind.exchange(access.rawValue, ordering: .relaxed)
        return (previousThread, previousKind)
    }

    /// Ends an access begun with ``begin(_:)``. The previous owner is restored rather than
    /// cleared: accesses to one connection do not nest today (its admission permit is held),
    /// and should one ever nest, the outer access keeps its connection when the inner ends.
    func end(restoring previous: (thread: UInt, kind: UInt8)) {
        thread.store(previous.thread, ordering: .relaxed)
        if previous.thread != 0 { kind.store(previous.kind, ordering: .relaxed) }
    }

    /// Stops the process, naming `operation`, unless the calling thread runs the access the
    /// connection is lent to.
    ///
    /// One relaxed load, a `pthread_self()` and a comparison (about ten instructions), paid once
    /// per statement execution and once per row of a cursor, never per column. `sql` is an
    /// autoclosure so that a caller naming another object's SQL (a cursor, its statement's)
    /// pays for loading it only when it reports a violation: loaded on every call, it cost a
    /// cursor a retain and a release per row.
    @inline(__always)
    func check(_ operation: StaticString, sql: @autoclosure () -> String? = nil) {
        if thread.load(ordering: .relaxed) != currentThreadIdentifier() {
            violation(operation, sql: sql())
        }
    }

    @inline(never)
    private func violation(_ operation: StaticString, sql: String?) -> Never {
        let owner = thread.load(ordering: .relaxed)
        let access = AccessKind(rawValue: kind.load(ordering: .relaxed))?.methodName ?? "access"
        let what = "\(operation)" + (sql.map { " (`\($0)`)" } ?? "")
        let situation =
            if owner == 0 {
                "no access is running on it: it escaped from the `\(access)` closure that received it, and was used after that closure returned"
            } else if kind.load(ordering: .relaxed) == AccessKind.opening.rawValue {
                "it is being opened on another thread: it was used from a thread other than the one running `Configuration.prepareDatabase`"
            } else {
                "it is lent to the `\(access)` closure running on another thread, and was used from a thread other than that closure's (captured by a task, a dispatch block or a thread started inside the closure?)"
            }
        fatalError(
            "Database \(connection) was used outside of its access: \(what), but \(situation). A Database, and its statements and cursors, are only valid inside the closure of the read or write that provided them, on the thread that runs it: return the values you need from the closure instead of the Database."
        )
    }
}

/// An identifier of the calling thread, never 0.
@inline(__always)
func currentThreadIdentifier() -> UInt {
    #if canImport(Glibc)
        UInt(pthread_self())
    #else
        UInt(bitPattern: pthread_self())
    #endif
}
