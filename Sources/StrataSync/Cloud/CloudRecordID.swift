/// A record's identity in the cloud: its name within a zone.
public struct CloudRecordID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The record's name; StrataSync uses `"<primary key>:<table name>"`.
    public var name: String
    /// The zone that holds the record.
    public var zone: CloudZoneID

    public init(name: String, zone: CloudZoneID) {
        self.name = name
        self.zone = zone
    }

    public var description: String { "\(name) in \(zone)" }
}
