/// A write that can be a step of a trigger body: INSERT, UPDATE or DELETE.
///
/// SQLite refuses a schema-qualified table as the target of a trigger step, so these
/// statements write their table's name alone there (``Table/triggerStepTableFragment``).
protocol TriggerStepStatement {
    /// The checked statement as a trigger step: its table unqualified.
    func checkedTriggerStepFragment() throws -> QueryFragment
}

extension QueryStatement {
    /// The statement as it is written in a trigger body, checked: a write names its table
    /// unqualified, any other statement is written as it runs.
    func checkedTriggerBodyFragment() throws -> QueryFragment {
        if let step = self as? any TriggerStepStatement {
            return try step.checkedTriggerStepFragment()
        }
        return try checkedStatementFragment()
    }
}
