import PostgresNIO

/// Why the store's hot statements are prepared (issue #27, the push path).
///
/// PostgresNIO sends every `query` as an unnamed statement, so PostgreSQL parses and plans it
/// on every call: with `log_min_duration_statement = 0`, the parse and bind of a one-record
/// modify's statements took about 1.2 ms of PostgreSQL's 2.3 ms, and a fetch's about 0.3 ms
/// each, on every push. A prepared statement is parsed once per pooled connection; after five
/// executions PostgreSQL keeps a generic plan when it costs no more than the custom ones.
///
/// Row-level security stays as it is: the plan cache keeps the role a plan was made for and
/// plans again for another one, and the policies read `strata.user` when they run, not when
/// the plan is made. Every request runs as ``CloudStore/requestRole``.
///
/// Prepared are the statements of the requests every push and sync makes (modify, the feeds);
/// the rarer ones (sharing, zones, assets) stay unnamed.
enum PreparedStatements {}

extension PostgresBindings {
    /// Bindings that start with a zone's owner and name (`$1`, `$2`), as most of the store's
    /// statements do; room for `capacity` in all.
    static func zone(owner: String, name: String, capacity: Int = 2) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: capacity)
        bindings.append(owner)
        bindings.append(name)
        return bindings
    }
}
