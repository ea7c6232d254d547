import StrataCloud

/// A page of a zone on its way to being applied: where the next page starts, known as soon
/// as it arrived, and its records being read (opened, with end-to-end encryption) and their
/// metadata JSON written, in a task of their own (``EncodedRecords``).
struct FetchedPage: Sendable {
    let token: CloudChangeToken
    let moreComing: Bool
    /// Where pages after the next one start, as the cloud planned them.
    let followingTokens: [CloudChangeToken]
    /// Whether it was asked for from a start an earlier page planned, rather than from the
    /// token of the page before it: its changes may then all be on the page before it.
    let fromPlannedStart: Bool
    let reading: Task<(CloudZoneChanges, EncodedRecords), any Error>

    init(_ arriving: ArrivingZoneChanges, fromPlannedStart: Bool = false) {
        token = arriving.token
        moreComing = arriving.moreComing
        followingTokens = arriving.followingTokens
        self.fromPlannedStart = fromPlannedStart
        reading = Task {
            let page = try await arriving.changes()
            return (page, EncodedRecords(page.changed))
        }
    }
}
