import StrataCloud

/// The body of `saveZones` and `deleteZones`.
public struct ZonesRequest: Codable, Sendable, Hashable {
    /// The zones to save or delete.
    public var zones: [CloudZoneID]

    /// A request for `zones`.
    public init(zones: [CloudZoneID]) {
        self.zones = zones
    }
}

/// The body of a successful response that carries nothing.
public struct EmptyResponse: Codable, Sendable, Hashable {
    /// The empty body.
    public init() {}
}
