import StrataCloud

/// A page of a zone on its way to being applied: where the next page starts, known as soon
/// as it arrived, and its records being read (opened, with end-to-end encryption) and their
/// metadata JSON written, in a task of their own (``EncodedRecords``).
struct FetchedPage: Sendable {
    let token: CloudChangeToken
    let moreComing: Bool
    /// Where pages after the next one start, as the cloud planned them.
    let followingTokens: [CloudChangeToken]
    /// The start it was asked from when an earlier page planned it, rather than the token of
    /// the page before it: applied only when that page ended there.
    let plannedStart: CloudChangeToken?
    let reading: Task<(CloudZoneChanges, EncodedRecords), any Error>

    init(_ arriving: ArrivingZoneChanges, plannedStart: CloudChangeToken? = nil) {
        token = arriving.token
        moreComing = arriving.moreComing
        followingTokens = arriving.followingTokens
        self.plannedStart = plannedStart
        reading = Task {
            let page = try await arriving.changes()
            return (page, EncodedRecords(page.changed))
        }
    }
}
