extension SyncEngine {
    /// The configuration's merge policies, by table and column.
    var columnPolicies: ColumnPolicies { ColumnPolicies(configuration.mergePolicies) }

    /// Applies fetched records with this engine's schema, clock and merge policies.
    func incomingChanges() -> IncomingChanges {
        var incoming = IncomingChanges(schema: schema, clock: clock, logger: logger)
        incoming.policies = columnPolicies
        return incoming
    }
}
