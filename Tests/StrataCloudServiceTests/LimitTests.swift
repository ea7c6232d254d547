import Foundation
import StrataCloudClient
import StrataCloudService
import StrataCloudWire
import StrataSync
import Testing

/// Requests over the service's limits fail with `limitExceeded` before the backend sees them.
@Suite(.timeLimit(.minutes(5))) struct LimitTests {
    @Test func tooManyItemsIsRefusedBeforeTheBackend() async throws {
        // The backend's own limit is higher: the service's refuses first.
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud, configure: { $0.limits = CloudLimits(maximumItemsPerRequest: 3) }) { harness in
            let database = try await harness.container(user: "alice").privateDatabase
            try await database.saveZones([CloudScript.zone])
            let records = (0..<4).map { CloudScript.record("r\($0)") }
            await #expect(throws: CloudError.limitExceeded) { _ = try await database.modifyRecords(saving: records, deleting: []) }
            await #expect(throws: CloudError.limitExceeded) {
                _ = try await database.modifyRecords(saving: Array(records.prefix(2)), deleting: records.suffix(2).map(\.id))
            }
            await #expect(throws: CloudError.limitExceeded) { _ = try await database.fetchRecords(records.map(\.id)) }
            #expect(cloud.requestCount(.modifyRecords) == 0)
            #expect(cloud.requestCount(.fetchRecords) == 0)
            let saved = try await database.modifyRecords(saving: Array(records.prefix(3)), deleting: [])
            #expect(saved.saveResults.count == 3)
        }
    }

    @Test func aBodyOverTheMaximumIsRefused() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud, configure: { $0.maximumBodyBytes = 4_000 }) { harness in
            let database = try await harness.container(user: "alice").privateDatabase
            try await database.saveZones([CloudScript.zone])
            let big = CloudScript.record("big", fields: ["text": .text(String(repeating: "x", count: 5_000))])
            await #expect(throws: CloudError.limitExceeded) { _ = try await database.modifyRecords(saving: [big], deleting: []) }
            #expect(cloud.requestCount(.modifyRecords) == 0)
            let token = try await harness.token(user: "alice")
            let raw = try await harness.send(
                .POST, CloudRoute.database(.private, .missingAssets), authorization: "Bearer \(token)",
                body: Data(("{\"hashes\":[\"" + String(repeating: "a", count: 5_000) + "\"]}").utf8))
            #expect(raw.status == 413)
            #expect(cloud.requestCount(.missingAssets) == 0)
        }
    }

    @Test func oneRecordOverTheMaximumIsRefused() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud, configure: { $0.maximumRecordBytes = 1_000 }) { harness in
            let database = try await harness.container(user: "alice").privateDatabase
            try await database.saveZones([CloudScript.zone])
            let big = CloudScript.record("big", fields: ["text": .text(String(repeating: "x", count: 2_000))])
            await #expect(throws: CloudError.limitExceeded) {
                _ = try await database.modifyRecords(saving: [CloudScript.record("small"), big], deleting: [])
            }
            #expect(cloud.requestCount(.modifyRecords) == 0)
        }
    }

    @Test func tooManyBytesInOneRequestIsRefused() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud, configure: { $0.limits = CloudLimits(maximumBytesPerRequest: 3_000) }) { harness in
            let database = try await harness.container(user: "alice").privateDatabase
            try await database.saveZones([CloudScript.zone])
            let records = (0..<2).map { CloudScript.record("r\($0)", fields: ["text": .text(String(repeating: "x", count: 2_000))]) }
            await #expect(throws: CloudError.limitExceeded) { _ = try await database.modifyRecords(saving: records, deleting: []) }
            #expect(cloud.requestCount(.modifyRecords) == 0)
        }
    }

    @Test func aMalformedBodyIsABadRequest() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let token = try await harness.token(user: "alice")
            let raw = try await harness.send(
                .POST, CloudRoute.database(.private, .fetchRecords), authorization: "Bearer \(token)", body: Data("{\"nope\":1}".utf8))
            #expect(raw.status == 400)
            #expect(cloud.requestCount(.fetchRecords) == 0)
        }
    }
}
