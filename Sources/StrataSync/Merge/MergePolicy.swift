import StrataQueries
import StrataSQLite

/// How concurrent edits of one synced column merge, when last-writer-wins is not what the
/// column means. Columns without a policy keep the default rule (see `Documentation/Sync.md`).
///
/// ```swift
/// SyncEngineConfiguration(mergePolicies: [
///     .counter(Player.columns.score),
///     .custom(Tag.columns.labels) { local, incoming in unionOfCommaLists(local.value, incoming.value) },
/// ])
/// ```
///
/// Checked when the engine is created: an unknown table or column, a column with two
/// policies, a policy on a primary key or foreign key, or a counter on a column that is not
/// INTEGER throws a ``SyncSchemaError`` naming them.
public struct MergePolicy: Sendable {
    /// The synced table.
    public let table: String
    /// The column the policy decides.
    public let column: String
    let rule: Rule

    /// What decides the column's merge.
    enum Rule: Sendable {
        /// Concurrent increments add up (``MergePolicy/counter(table:column:)``).
        case counter
        /// The app's function decides (``MergePolicy/custom(table:column:merge:)``).
        case custom(@Sendable (MergeCandidate, MergeCandidate) -> DatabaseValue)
    }

    /// Whether the policy is a counter.
    public var isCounter: Bool {
        if case .counter = rule { return true }
        return false
    }

    /// A counter: concurrent changes add up instead of one replacing the other.
    ///
    /// The app keeps writing plain values (`score = score + 1`, `score = score - 3`); the
    /// engine turns each device's changes into its own contribution, carried in the record
    /// (sealed with the other fields), and the column's value on every device becomes the sum
    /// of every device's contributions. Two devices that each add 1 while apart both see +2
    /// after syncing, whatever the order of sends and fetches. Setting the column to a value
    /// is a change by the difference: `score = 0` on one device while another adds 1 ends at 1.
    ///
    /// The column must be INTEGER (REAL is refused: floating-point sums depend on their order
    /// and would not converge bit for bit). NULL counts as 0. A sum beyond `Int64` stops with
    /// ``CounterMergeError/overflow(table:column:primaryKey:)``, never a trap.
    public static func counter(table: String, column: String) -> MergePolicy {
        MergePolicy(table: table, column: column, rule: .counter)
    }

    /// A counter on a table's integer column (see ``counter(table:column:)``).
    public static func counter<Root: Table, Value: BinaryInteger>(_ column: TableColumn<Root, Value>) -> MergePolicy {
        counter(table: Root.tableName, column: column.name)
    }

    /// A counter on a table's optional integer column (see ``counter(table:column:)``).
    public static func counter<Root: Table, Value: BinaryInteger>(_ column: TableColumn<Root, Value?>) -> MergePolicy {
        counter(table: Root.tableName, column: column.name)
    }

    /// The app's own merge of a column: given this device's value and an incoming one, each
    /// with the version of its last edit, `merge` returns the value to keep.
    ///
    /// The engine calls it when a record arrives whose value of the column differs from a
    /// local value that has a version (a row this device has, whose column it edited or
    /// received before). The value it returns is written here and, when it is not the incoming
    /// one, sent with the greater of the two versions. A missing local row, or a record that
    /// does not carry the column (an older app version), skips it as the default rule would.
    ///
    /// For devices to converge, `merge` must be:
    /// - **deterministic**: the same inputs always give the same value, on every device and
    ///   app version (no clock, no randomness, no device state);
    /// - **commutative**: `merge(a, b) == merge(b, a)`: each device sees the other side as the
    ///   incoming one;
    /// - **associative and idempotent**: `merge(a, merge(b, c)) == merge(merge(a, b), c)` and
    ///   `merge(a, a) == a`, since three devices merge in any grouping, and a page applied twice
    ///   merges a value with itself.
    ///
    /// The maximum of two numbers, the union of two sets, the later of two dates do; "append
    /// the incoming text", "keep mine" or "the one with the greater version" (that is the
    /// default rule, with its ties) do not, or not in general: devices may then stay apart.
    /// It runs inside the fetch's write transaction: keep it quick, and do not touch the
    /// database from it.
    public static func custom(
        table: String, column: String, merge: @escaping @Sendable (_ local: MergeCandidate, _ incoming: MergeCandidate) -> DatabaseValue
    ) -> MergePolicy {
        MergePolicy(table: table, column: column, rule: .custom(merge))
    }

    /// The app's own merge of a table's column (see ``custom(table:column:merge:)``).
    public static func custom<Root: Table, Value>(
        _ column: TableColumn<Root, Value>,
        merge: @escaping @Sendable (_ local: MergeCandidate, _ incoming: MergeCandidate) -> DatabaseValue
    ) -> MergePolicy {
        custom(table: Root.tableName, column: column.name, merge: merge)
    }
}

/// One side of a custom merge (``MergePolicy/custom(table:column:merge:)``): a value of the
/// column and the version of the edit that wrote it.
public struct MergeCandidate: Sendable, Hashable {
    /// The value, as SQLite holds it.
    public var value: DatabaseValue
    /// The hybrid logical clock version of its edit.
    public var version: HybridTimestamp

    /// A candidate.
    public init(value: DatabaseValue, version: HybridTimestamp) {
        self.value = value
        self.version = version
    }
}
