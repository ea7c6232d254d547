import Strata

extension Schema {
    /// How Scorekeeper's columns merge when two devices edit them while apart, beyond the
    /// default rule (the later edit wins, per column): a score is a counter, so points added on
    /// two devices both count.
    public static let mergePolicies: [MergePolicy] = [.counter(Player.columns.score)]
}
