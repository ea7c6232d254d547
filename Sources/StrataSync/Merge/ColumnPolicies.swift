/// The merge policies of a configuration, checked against the synced tables and looked up by
/// table and column while records are sent and applied.
struct ColumnPolicies: Sendable {
    private var rules: [String: [String: MergePolicy.Rule]] = [:]
    private var counters: [String: [String]] = [:]

    /// No policy: every column merges by the default rule.
    init() {}

    /// The policies, assumed valid (``validate(_:schema:)``).
    init(_ policies: [MergePolicy]) {
        for policy in policies {
            rules[policy.table, default: [:]][policy.column] = policy.rule
            if policy.isCounter { counters[policy.table, default: []].append(policy.column) }
        }
        for table in counters.keys { counters[table]?.sort() }
    }

    /// Whether no column has a policy.
    var isEmpty: Bool { rules.isEmpty }

    /// The rules of a table's columns that have one.
    func rules(of table: String) -> [String: MergePolicy.Rule] { rules[table] ?? [:] }

    /// A table's counter columns, sorted.
    func counterColumns(of table: String) -> [String] { counters[table] ?? [] }

    /// Checks each policy against the synced tables.
    ///
    /// - Throws: ``SyncSchemaError`` naming the table and column: the table is not synced, the
    ///   column does not exist or is generated, it has two policies, it is the primary key or
    ///   the foreign key (their merge is the engine's), or a counter's column is not INTEGER.
    static func validate(_ policies: [MergePolicy], schema: SyncSchema) throws {
        var seen: Set<[String]> = []
        for policy in policies {
            guard let table = schema.table(named: policy.table) else {
                throw SyncSchemaError.mergePolicyTableNotSynced(table: policy.table, column: policy.column)
            }
            guard let column = table.columns.first(where: { $0.name == policy.column }) else {
                throw SyncSchemaError.mergePolicyColumnNotFound(table: policy.table, column: policy.column)
            }
            if column.name == table.primaryKey || table.parent?.column == column.name {
                throw SyncSchemaError.mergePolicyOnKeyColumn(table: policy.table, column: policy.column)
            }
            guard seen.insert([policy.table, policy.column]).inserted else {
                throw SyncSchemaError.duplicateMergePolicy(table: policy.table, column: policy.column)
            }
            if policy.isCounter && !column.declaredType.uppercased().contains("INT") {
                throw SyncSchemaError.counterColumnNotInteger(table: policy.table, column: policy.column, declaredType: column.declaredType)
            }
        }
    }
}
