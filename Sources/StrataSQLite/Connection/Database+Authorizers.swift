import CSQLite

/// One question SQLite's authorizer asks while a statement is prepared: may this statement do
/// `action` to this table, column, function or pragma?
///
/// The meaning of ``firstArgument`` and ``secondArgument`` depends on the action; SQLite's
/// "Authorizer Action Codes" documentation lists them (for `SQLITE_READ`: table and column;
/// for `SQLITE_INSERT`: table; for `SQLITE_FUNCTION`: nil and the function's name).
public struct AuthorizerRequest: Sendable, Hashable {
    /// The action code, such as `SQLITE_READ`, `SQLITE_INSERT`, `SQLITE_PRAGMA`.
    public var action: Int32
    /// The action's first argument (for reads and writes, the table).
    public var firstArgument: String?
    /// The action's second argument (for reads, the column).
    public var secondArgument: String?
    /// The schema (`main`, `temp`, an attached name), when the action concerns one.
    public var schemaName: String?
    /// The innermost trigger or view responsible for the access, if any.
    public var triggerOrViewName: String?

    /// A request, for tests of an authorizer closure.
    public init(action: Int32, firstArgument: String?, secondArgument: String?, schemaName: String?, triggerOrViewName: String?) {
        self.action = action
        self.firstArgument = firstArgument
        self.secondArgument = secondArgument
        self.schemaName = schemaName
        self.triggerOrViewName = triggerOrViewName
    }
}

/// An authorizer's answer.
public enum AuthorizerDecision: Sendable, Hashable {
    /// Allow the action.
    case allow
    /// Prepare the statement but skip the action: a read yields NULL, a delete keeps rows
    /// (SQLite's `SQLITE_IGNORE`).
    case ignore
    /// Refuse: preparing the statement fails with `SQLITE_AUTH`.
    case deny

    var resultCode: Int32 {
        switch self {
        case .allow: SQLITE_OK
        case .ignore: SQLITE_IGNORE
        case .deny: SQLITE_DENY
        }
    }
}

/// Identifies an authorizer added with ``Database/addAuthorizer(_:)``, to remove it.
public struct AuthorizerID: Hashable, Sendable {
    let rawValue: Int
}

extension Database {
    /// Adds an authorizer, asked about every action of every statement prepared from now on.
    ///
    /// SQLite has one authorizer slot, which Strata uses to record what statements read and
    /// write (for observation); authorizers added here are asked after it, and the strictest
    /// answer wins (`deny`, then `ignore`). Statements already in the statement cache are not
    /// prepared again: call ``clearStatementCache()`` if the new authorizer must see them.
    @discardableResult
    public func addAuthorizer(_ body: @escaping (AuthorizerRequest) -> AuthorizerDecision) -> AuthorizerID {
        confinement.check("Database.addAuthorizer(_:)")
        let id = nextListenerID
        nextListenerID += 1
        authorizers.append((id, body))
        return AuthorizerID(rawValue: id)
    }

    /// Removes an authorizer added with ``addAuthorizer(_:)``.
    public func removeAuthorizer(_ id: AuthorizerID) {
        confinement.check("Database.removeAuthorizer(_:)")
        authorizers.removeAll { $0.id == id.rawValue }
    }

    /// The strictest answer of the added authorizers, starting from Strata's own.
    func askAuthorizers(
        _ builtIn: Int32, action: Int32,
        _ first: UnsafePointer<CChar>?, _ second: UnsafePointer<CChar>?,
        _ schema: UnsafePointer<CChar>?, _ trigger: UnsafePointer<CChar>?
    ) -> Int32 {
        let request = AuthorizerRequest(
            action: action, firstArgument: first.map { String(cString: $0) },
            secondArgument: second.map { String(cString: $0) }, schemaName: schema.map { String(cString: $0) },
            triggerOrViewName: trigger.map { String(cString: $0) })
        var result = builtIn
        for authorizer in authorizers {
            switch authorizer.body(request) {
            case .deny: return SQLITE_DENY
            case .ignore: result = SQLITE_IGNORE
            case .allow: break
            }
        }
        return result
    }
}
