import StrataCloud

/// A page of a zone on its way to being applied: where the next page starts, known as soon
/// as it arrived, and its records being read (opened, with end-to-end encryption) and their
/// metadata JSON written, in a task of their own (``EncodedRecords``).
struct FetchedPage: Sendable {
    let token: CloudChangeToken
    let moreComing: Bool
    let reading: Task<(CloudZoneChanges, EncodedRecords), any Error>

    init(_ arriving: ArrivingZoneChanges) {
        token = arriving.token
        moreComing = arriving.moreComing
        reading = Task {
            let page = try await arriving.changes()
            return (page, EncodedRecords(page.changed))
        }
    }
}
