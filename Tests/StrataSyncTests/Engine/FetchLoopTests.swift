import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Testing

/// A zone's fetch never loops without progress: a cloud that keeps saying "more" without
/// moving its token, or whose tokens keep expiring, ends the fetch with a typed error that
/// names the zone, not a retry for ever.
@Suite(.timeLimit(.minutes(1))) struct FetchLoopTests {
    func receiver(
        of cloud: MockCloud, _ fetchZone: @escaping InterceptingContainer.FetchZone
    ) async throws -> SyncTestDevice {
        var container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            try await next.modifyRecords(saving: saving, deleting: deleting)
        }
        container.fetchZone = fetchZone
        return try await SyncTestDevice("b", container: container, fetchPageSize: 2)
    }

    func sender(of cloud: MockCloud) async throws {
        let sender = try await SyncTestDevice("a", cloud: cloud)
        for index in 0..<5 { try await sender.execute("INSERT INTO games (id, title) VALUES ('g\(index)', 'Game \(index)')") }
        try await sender.engine.sendChanges()
    }

    @Test func moreComingWithAnUnmovedTokenIsAStall() async throws {
        let cloud = MockCloud()
        try await sender(of: cloud)
        let receiver = try await receiver(of: cloud) { zone, token, limit, next in
            guard token != nil else { return try await next.fetchZoneChanges(zone, since: nil, limit: limit) }
            // Past the first page, the same token back, with "more" still coming.
            var page = try await next.fetchZoneChanges(zone, since: token, limit: limit)
            page.token = try #require(token)
            page.moreComing = true
            return page
        }
        await #expect {
            try await receiver.engine.fetchChanges()
        } throws: { error in
            guard case SyncEngineError.fetchStalled(let zone, _) = error else { return false }
            return zone.name == "strata.default"
        }
    }

    @Test func tokensThatKeepExpiringEndTheFetch() async throws {
        let cloud = MockCloud()
        try await sender(of: cloud)
        let requests = SharedCounter()
        let receiver = try await receiver(of: cloud) { zone, token, limit, next in
            requests.increment()
            if token != nil { throw CloudError.changeTokenExpired }
            return try await next.fetchZoneChanges(zone, since: nil, limit: limit)
        }
        await #expect {
            try await receiver.engine.fetchChanges()
        } throws: { error in
            guard case SyncEngineError.fetchStalled = error else { return false }
            return true
        }
        // The first page, then a restart's first page for each allowed restart, each followed
        // by a second page that expired.
        #expect(requests.count == 2 * 4)
    }
}
