/// A record's identity in the cloud: its name within a zone.
public struct CloudRecordID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The record's name; StrataSync uses `"<primary key>:<table name>"`.
    public var name: String
    /// The zone that holds the record.
    public var zone: CloudZoneID

    /// An id from its parts.
    public init(name: String, zone: CloudZoneID) {
        self.name = name
        self.zone = zone
    }

    /// `name in zone@owner`.
    public var description: String { "\(name) in \(zone)" }

    /// Equal when the names have the same bytes, as the databases compare them: two names
    /// Swift calls equal (canonically equivalent texts, such as keys typed on different systems)
    /// are two records.
    public static func == (lhs: CloudRecordID, rhs: CloudRecordID) -> Bool {
        lhs.name.hasSameBytes(as: rhs.name) && lhs.zone == rhs.zone
    }

    /// The name's bytes alone: ids hashed together (a batch's, a page's) nearly always share
    /// their zone, so hashing it told none apart and was two thirds of the bytes hashed on
    /// every dictionary probe. Equality still compares the zone.
    public func hash(into hasher: inout Hasher) {
        name.hashBytes(into: &hasher)
    }
}
