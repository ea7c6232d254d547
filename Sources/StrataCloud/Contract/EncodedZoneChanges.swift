/// A page of a zone's changes whose saved records are JSON already, in the form
/// ``CloudRecord``'s JSON takes: what a store that keeps records as JSON answers without
/// decoding every record and writing it again.
///
/// A first sync's download is a chain of pages, each asked for once the one before arrived:
/// reading each record of a page into values and writing them out again was half of the
/// service's work on the chain (Documentation/Performance.md, issue #27).
package struct EncodedZoneChanges: Sendable {
    /// The saved records, each a JSON object in ``CloudRecord``'s form, separated by commas,
    /// in the page's order.
    package var changed: [UInt8]
    /// How many records ``changed`` holds.
    package var changedCount: Int
    package var deleted: [CloudTombstone]
    package var token: CloudChangeToken
    package var moreComing: Bool
    package var remainingEstimate: Int?
    /// ``CloudZoneChanges/followingTokens``.
    package var followingTokens: [CloudChangeToken]

    package init(
        changed: [UInt8], changedCount: Int, deleted: [CloudTombstone], token: CloudChangeToken, moreComing: Bool,
        remainingEstimate: Int?, followingTokens: [CloudChangeToken] = []
    ) {
        self.changed = changed
        self.changedCount = changedCount
        self.deleted = deleted
        self.token = token
        self.moreComing = moreComing
        self.remainingEstimate = remainingEstimate
        self.followingTokens = followingTokens
    }
}

/// A ``CloudDatabase`` that also answers a page of a zone's changes as
/// ``EncodedZoneChanges``: the same page ``CloudDatabase/fetchZoneChanges(_:since:limit:)``
/// answers, its records written as JSON.
package protocol EncodedZonePageSource: CloudDatabase {
    /// - Parameter plannedPages: as ``CloudDatabase/fetchArrivingZoneChanges(_:since:limit:plannedPages:)``
    ///   takes it.
    func fetchEncodedZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int
    ) async throws -> EncodedZoneChanges
}
