/// A zone of a cloud database: a named group of records with an owner.
///
/// Saves are atomic per zone, and change feeds are per zone. The owner is the user who created
/// the zone; another user sees it (filtered to what was shared) in their shared database.
public struct CloudZoneID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The zone's name, unique per owner.
    public var name: String
    /// The user record name of the zone's owner.
    public var owner: String

    /// A zone id from its parts.
    public init(name: String, owner: String) {
        self.name = name
        self.owner = owner
    }

    /// `name@owner`.
    public var description: String { "\(name)@\(owner)" }

    /// Equal when names and owners have the same bytes, as the databases compare them, not
    /// merely canonically equivalent texts.
    public static func == (lhs: CloudZoneID, rhs: CloudZoneID) -> Bool {
        lhs.name.hasSameBytes(as: rhs.name) && lhs.owner.hasSameBytes(as: rhs.owner)
    }

    public func hash(into hasher: inout Hasher) {
        name.hashBytes(into: &hasher)
        owner.hashBytes(into: &hasher)
    }
}
