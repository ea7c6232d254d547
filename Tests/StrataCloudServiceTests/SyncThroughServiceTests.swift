import AsyncHTTPClient
import Foundation
import StrataCloudClient
import StrataCloudService
import StrataCloudWire
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// Two engines, each with its own database, sync through the service as through any cloud.
@Suite(.timeLimit(.minutes(5))) struct SyncThroughServiceTests {
    @Test func aRowInsertedOnOneDeviceArrivesOnTheOther() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let a = try await SyncTestDevice("a", container: harness.container(user: "alice"))
            let b = try await SyncTestDevice("b", container: harness.container(user: "alice"))
            try await a.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 3)")
            try await a.execute("INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann')")
            try await a.engine.sendChanges()
            try await b.engine.fetchChanges()
            #expect(try await b.rows() == ["game g1 'Poker' 3", "player p1 'g1' 'Ann'"])

            try await b.execute("UPDATE games SET title = 'Bridge' WHERE id = 'g1'; DELETE FROM players WHERE id = 'p1'")
            try await b.engine.syncChanges()
            try await a.engine.syncChanges()
            #expect(try await a.rows() == ["game g1 'Bridge' 3"])
            #expect(try await a.engine.pendingCount() == 0)
            #expect(try await b.engine.pendingCount() == 0)
        }
    }

    @Test func anEngineSplitsBatchesTheServiceRefuses() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud, configure: { $0.limits = CloudLimits(maximumItemsPerRequest: 3) }) { harness in
            let a = try await SyncTestDevice("a", container: harness.container(user: "alice"))
            let b = try await SyncTestDevice("b", container: harness.container(user: "alice"))
            for index in 0..<10 { try await a.execute("INSERT INTO games (id, title) VALUES ('g\(index)', 'Game \(index)')") }
            try await a.engine.sendChanges()
            try await b.engine.fetchChanges()
            #expect(try await b.rows().count == 10)
            #expect(cloud.modifyRequestSizes.allSatisfy { $0 <= 3 })
        }
    }

    @Test func aWriteLandingPushesAHintToTheOtherDevice() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let a = try await SyncTestDevice("a", container: harness.container(user: "alice"))
            let bContainer = try await harness.container(user: "alice")
            let b = try await SyncTestDevice("b", container: bContainer)
            var hints = bContainer.changeHints().makeAsyncIterator()
            // The first hint is the connection's own: fetch what may have changed before it.
            #expect(await hints.next() != nil)
            try await b.engine.fetchChanges()
            try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
            try await a.engine.sendChanges()
            #expect(await hints.next() != nil)
            try await b.engine.fetchChanges()
            #expect(try await b.rows() == ["game g1 'Poker' NULL"])
        }
    }

    /// Each open change stream holds an HTTP connection for as long as it is open. The default
    /// client used to be `HTTPClient.shared`, which opens at most 8 connections to one host:
    /// with 8 streams open in a process, every other request to the service waited forever.
    @Test(.timeLimit(.minutes(1))) func manyOpenChangeStreamsLeaveRoomForRequests() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            var streams: [AsyncStream<Void>.Iterator] = []
            for index in 0..<12 {
                var hints = try await harness.container(user: "user-\(index)").changeHints().makeAsyncIterator()
                #expect(await hints.next() != nil)
                streams.append(hints)
            }
            let container = try await harness.container(user: "alice")
            #expect(try await container.accountStatus() == .available)
            #expect(streams.count == 12)
        }
    }

    @Test func aDroppedStreamReconnectsAndHintsAgain() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let container = try await harness.container(user: "alice")
            var hints = container.changeHints().makeAsyncIterator()
            #expect(await hints.next() != nil)
            harness.service.closeChangeStreams()
            // The reconnect's hint: changes may have landed while the stream was down.
            #expect(await hints.next() != nil)
        }
    }

    @Test(.timeLimit(.minutes(1))) func shutdownEndsOpenChangeStreams() async throws {
        let cloud = MockCloud()
        let harness = try await ServiceHarness.start(configuration: ServiceHarness.configuration()) { cloud.container(user: $0) }
        let container = try await harness.container(user: "alice")
        let stream = container.changeHints()
        var hints = stream.makeAsyncIterator()
        #expect(await hints.next() != nil)
        #expect(harness.service.openChangeStreamCount == 1)
        try await harness.stop()
        #expect(harness.service.openChangeStreamCount == 0)
    }
}

/// The change stream's heartbeats, read off the wire.
@Suite(.timeLimit(.minutes(5))) struct ChangeStreamWireTests {
    @Test func anIdleStreamSendsHeartbeats() async throws {
        try await ServiceHarness.with(cloud: MockCloud(), configure: { $0.heartbeatInterval = .milliseconds(10) }) { harness in
            let token = try await harness.token(user: "alice")
            var request = HTTPClientRequest(url: harness.baseURL.absoluteString + CloudRoute.changes)
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            let response = try await HTTPClient.shared.execute(request, deadline: .distantFuture)
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "Content-Type") == "text/event-stream")
            var parser = ServerSentEventParser()
            var heartbeats = 0
            for try await buffer in response.body {
                heartbeats += parser.feed(buffer.readableBytesView).filter { $0 == .heartbeat }.count
                // The first comes at once; two more prove the timer.
                if heartbeats >= 3 { break }
            }
            #expect(heartbeats >= 3)
        }
    }
}
