import Foundation
import StrataSQLite

/// A date column a trigger can set to the current time: ``TouchEvent``.
public protocol CurrentTimestampRepresentable {
    /// SQL that evaluates to the current time in this type's stored form.
    static var currentTimestampSQL: QueryFragment { get }
}

extension Date: CurrentTimestampRepresentable {
    /// UTC `YYYY-MM-DD HH:MM:SS.SSS`, the form Strata stores dates in.
    public static var currentTimestampSQL: QueryFragment { "strftime('%Y-%m-%d %H:%M:%f', 'now')" }
}

extension Date.ISO8601Representation: CurrentTimestampRepresentable {
    public static var currentTimestampSQL: QueryFragment { "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')" }
}

extension Date.UnixTimeRepresentation: CurrentTimestampRepresentable {
    // unixepoch('subsec') needs SQLite 3.42; the Julian-day arithmetic works everywhere.
    public static var currentTimestampSQL: QueryFragment { "((julianday('now') - 2440587.5) * 86400.0)" }
}

extension Optional: CurrentTimestampRepresentable where Wrapped: CurrentTimestampRepresentable {
    public static var currentTimestampSQL: QueryFragment { Wrapped.currentTimestampSQL }
}
