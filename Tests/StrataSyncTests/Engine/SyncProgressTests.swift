import StrataSync
import Testing

/// ``SyncProgress``'s arithmetic, alone: totals, fractions, and what each step of a send or
/// fetch does to a zone's numbers.
@Suite(.timeLimit(.minutes(1))) struct SyncProgressTests {
    let games = CloudZoneID(name: "games", owner: "alice")
    let shared = CloudZoneID(name: "club", owner: "bob")

    @Test func nothingUnderWayIsEmptyAndComplete() {
        let progress = SyncProgress()
        #expect(progress.isEmpty)
        #expect(progress.sent == 0 && progress.toSend == 0 && progress.fetched == 0 && progress.toFetch == 0)
        #expect(progress.fractionCompleted == 1 && progress.fractionSent == 1 && progress.fractionFetched == 1)
        #expect(SyncProgress(zones: [games: SyncProgress.Zone()]).isEmpty)
    }

    @Test func totalsAndFractionsAddUpZones() {
        let progress = SyncProgress(zones: [
            games: SyncProgress.Zone(sent: 10, toSend: 40, fetched: 5, toFetch: 10),
            shared: SyncProgress.Zone(sent: 0, toSend: 10, fetched: 5, toFetch: 40),
        ])
        #expect(progress.sent == 10 && progress.toSend == 50)
        #expect(progress.fetched == 10 && progress.toFetch == 50)
        #expect(progress.fractionSent == 0.2 && progress.fractionFetched == 0.2)
        #expect(progress.fractionCompleted == 0.2)
        #expect(progress.zones[games]?.fractionCompleted == 0.3)
    }

    @Test func aSendCountsAcceptedRecordsAgainstWhatWasPendingAndClearsAtTheEnd() {
        var progress = SyncProgress()
        progress.startSending([games: 25, shared: 0])
        #expect(progress.zones == [games: SyncProgress.Zone(toSend: 25)])
        progress.recordSent([games: 10])
        progress.recordSent([games: 10, shared: 0])
        #expect(progress.zones[games] == SyncProgress.Zone(sent: 20, toSend: 25))
        // A change committed meanwhile, or a record sent again after a merge: the total grows.
        progress.recordSent([games: 7, shared: 2])
        #expect(progress.zones[games] == SyncProgress.Zone(sent: 27, toSend: 27))
        #expect(progress.zones[shared] == SyncProgress.Zone(sent: 2, toSend: 2))
        progress.finishSending()
        #expect(progress.isEmpty)
    }

    @Test func aFetchCountsPagesAgainstTheCloudsEstimate() {
        var progress = SyncProgress()
        progress.recordFetchedPage(in: games, count: 10, moreComing: true, remainingEstimate: 15, pageSize: 10, fromStart: true)
        #expect(progress.zones[games] == SyncProgress.Zone(fetched: 10, toFetch: 25))
        // An upper bound that shrinks: the total goes down as the truth arrives.
        progress.recordFetchedPage(in: games, count: 10, moreComing: true, remainingEstimate: 2, pageSize: 10, fromStart: false)
        #expect(progress.zones[games] == SyncProgress.Zone(fetched: 20, toFetch: 22))
        progress.recordFetchedPage(in: games, count: 2, moreComing: false, remainingEstimate: 0, pageSize: 10, fromStart: false)
        #expect(progress.zones[games] == SyncProgress.Zone(fetched: 22, toFetch: 22))
        #expect(progress.fractionFetched == 1)
        progress.finishFetching()
        #expect(progress.isEmpty)
    }

    @Test func aFetchFromTheStartCountsTheZoneAgain() {
        var progress = SyncProgress()
        progress.recordFetchedPage(in: games, count: 10, moreComing: true, remainingEstimate: 15, pageSize: 10, fromStart: true)
        progress.recordFetchedPage(in: games, count: 10, moreComing: true, remainingEstimate: 20, pageSize: 10, fromStart: true)
        #expect(progress.zones[games] == SyncProgress.Zone(fetched: 10, toFetch: 30))
    }

    @Test func withoutAnEstimateAPageThatSaysMoreComesCountsOneMorePage() {
        var progress = SyncProgress()
        progress.recordFetchedPage(in: games, count: 10, moreComing: true, remainingEstimate: nil, pageSize: 10, fromStart: true)
        #expect(progress.zones[games] == SyncProgress.Zone(fetched: 10, toFetch: 20))
        // An estimate of 0 with more coming is wrong: at least one change waits.
        progress.recordFetchedPage(in: games, count: 10, moreComing: true, remainingEstimate: 0, pageSize: 10, fromStart: false)
        #expect(progress.zones[games] == SyncProgress.Zone(fetched: 20, toFetch: 21))
        // An empty last page of a zone with nothing new leaves no numbers behind.
        progress.recordFetchedPage(in: shared, count: 0, moreComing: false, remainingEstimate: 0, pageSize: 10, fromStart: true)
        #expect(progress.zones[shared] == nil)
    }

    @Test func sendingAndFetchingKeepTheirOwnNumbers() {
        var progress = SyncProgress()
        progress.startSending([games: 4])
        progress.recordFetchedPage(in: games, count: 3, moreComing: true, remainingEstimate: 3, pageSize: 3, fromStart: true)
        progress.recordSent([games: 2])
        #expect(progress.zones[games] == SyncProgress.Zone(sent: 2, toSend: 4, fetched: 3, toFetch: 6))
        progress.finishFetching()
        #expect(progress.zones[games] == SyncProgress.Zone(sent: 2, toSend: 4))
        progress.startSending([:])
        #expect(progress.isEmpty)
    }
}
