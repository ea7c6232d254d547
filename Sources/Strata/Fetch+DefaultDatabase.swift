import Dependencies
import StrataObservation
import StrataSQLite

extension Fetch {
    /// Observes the value of a request in the default database.
    ///
    /// ```swift
    /// @Fetch(Scoreboard()) var scoreboard = Scoreboard.Value()
    /// ```
    public init<Request: FetchKeyRequest>(wrappedValue: Value, _ request: Request) where Request.Value == Value {
        @Dependency(\.defaultDatabase) var database
        self.init(wrappedValue: wrappedValue, request, database: database)
    }
}
