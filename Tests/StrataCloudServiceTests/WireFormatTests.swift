import Foundation
import StrataCloudWire
import StrataSync
import Testing

/// The wire format on its own: every CloudError survives JSON, and the event parser does not
/// care how the bytes are chunked.
@Suite(.timeLimit(.minutes(5))) struct WireFormatTests {
    static let id = CloudRecordID(name: "r", zone: CloudZoneID(name: "z", owner: "alice"))

    static let everyError: [CloudError] = [
        .serverRecordChanged(CloudRecord(id: id, type: "t", fields: ["a": .real(.nan), "b": .integer(.min)], changeTag: "tag-1")),
        .zoneNotFound(id.zone), .unknownItem(id), .supersededByDelete(id), .assetNotFound("h"),
        .invalidAsset("h", reason: "chunk 0 fails its CRC-32"),
        .referenceViolation(id), .permissionFailure(id), .permissionFailure(nil), .batchRequestFailed(id), .limitExceeded,
        .quotaExceeded, .changeTokenExpired, .notAuthenticated, .networkFailure,
        .serviceUnavailable(retryAfter: nil), .serviceUnavailable(retryAfter: Duration(secondsComponent: 3, attosecondsComponent: 17)),
        .requestRateLimited(retryAfter: nil), .requestRateLimited(retryAfter: .milliseconds(250)),
    ]

    /// A page's `remainingEstimate` travels when there is one, and is absent (and decodes as
    /// nil) when there is not: clients and services from before it still understand each other.
    @Test func aZonePagesEstimateIsOptionalOnTheWire() throws {
        let page = CloudZoneChanges(changed: [], deleted: [], token: CloudChangeToken("z:2"), moreComing: true, remainingEstimate: 40)
        let data = try CloudWire.makeEncoder().encode(ZoneChangesResponse(page))
        #expect(String(decoding: data, as: UTF8.self).contains("\"remainingEstimate\":40"))
        #expect(try CloudWire.makeDecoder().decode(ZoneChangesResponse.self, from: data).changes.remainingEstimate == 40)
        let old = Data(#"{"changed":[],"deleted":[],"token":{"value":"z:2"},"moreComing":true}"#.utf8)
        #expect(try CloudWire.makeDecoder().decode(ZoneChangesResponse.self, from: old).changes.remainingEstimate == nil)
        let withoutEstimate = CloudZoneChanges(changed: [], deleted: [], token: CloudChangeToken("z:2"), moreComing: false)
        let encoded = try CloudWire.makeEncoder().encode(ZoneChangesResponse(withoutEstimate))
        #expect(!String(decoding: encoded, as: UTF8.self).contains("remainingEstimate"))
    }

    @Test func everyCloudErrorSurvivesJSON() throws {
        for error in Self.everyError {
            let data = try CloudWire.makeEncoder().encode(ErrorResponse(error))
            let decoded = try CloudWire.makeDecoder().decode(ErrorResponse.self, from: data).error.cloudError()
            if case .serverRecordChanged(let record) = decoded {
                // NaN is never equal to itself: compare the bytes instead.
                #expect(try CloudWire.makeEncoder().encode(record) == CloudWire.makeEncoder().encode(CloudErrorBody(error).record))
            } else {
                #expect(decoded == error)
            }
        }
    }

    @Test func perItemResultsSurviveJSON() throws {
        let record = CloudRecord(id: Self.id, type: "t")
        let other = CloudRecordID(name: "s", zone: Self.id.zone)
        let result = CloudModifyResult(
            saveResults: [Self.id: .success(record), other: .failure(.batchRequestFailed(other))],
            deleteResults: [Self.id: .success(()), other: .failure(.referenceViolation(other))])
        let data = try CloudWire.makeEncoder().encode(ModifyRecordsResponse(result))
        let decoded = try CloudWire.makeDecoder().decode(ModifyRecordsResponse.self, from: data).modifyResult()
        #expect(decoded.saveResults == result.saveResults)
        #expect(try decoded.deleteResults[Self.id]?.get() != nil)
        #expect(throws: CloudError.referenceViolation(other)) { try decoded.deleteResults[other]?.get() }
    }

    /// The bodies with a hand-written form (`CloudWire.encode`, `CloudWire.decode`) read back as
    /// `JSONEncoder`'s and `JSONDecoder`'s do, both ways, results with errors included.
    @Test func fastBodiesAgreeWithTheCodableForms() throws {
        let record = CloudRecord(
            id: Self.id, type: "t", fields: ["a": .text("é\"\n/"), "b": .integer(.min), "c": .bytes(Data([0, 255])), "d": .null],
            fieldVersions: ["a": HybridTimestamp(milliseconds: 5, counter: 1, node: "n")], parent: Self.id, changeTag: "t1")
        let other = CloudRecordID(name: "s", zone: Self.id.zone)
        func check<T: Codable & Equatable>(_ value: T) throws {
            let fast = try CloudWire.encode(value)
            #expect(try CloudWire.makeDecoder().decode(T.self, from: fast) == value)
            #expect(try CloudWire.decode(T.self, from: CloudWire.makeEncoder().encode(value)) == value)
            #expect(try CloudWire.decode(T.self, from: fast) == value)
        }
        try check(ModifyRecordsRequest(saving: [record, CloudRecord(id: other, type: "t")], deleting: [other]))
        try check(ModifyRecordsRequest(saving: [], deleting: []))
        try check(ModifyRecordsResponse(CloudModifyResult(saveResults: [Self.id: .success(record)], deleteResults: [other: .success(())])))
        try check(
            ModifyRecordsResponse(
                CloudModifyResult(
                    saveResults: [Self.id: .success(record), other: .failure(.serverRecordChanged(record))],
                    deleteResults: [Self.id: .success(()), other: .failure(.referenceViolation(other))])))
        for estimate in [nil, 0, 7] as [Int?] {
            try check(
                ZoneChangesResponse(
                    CloudZoneChanges(
                        changed: [record], deleted: [CloudTombstone(id: other, type: "t")], token: CloudChangeToken("z:9"),
                        moreComing: estimate != nil, remainingEstimate: estimate)))
        }
        // An explicit null estimate is an absent one.
        let page = Data(#"{"changed":[],"deleted":[],"moreComing":false,"remainingEstimate":null,"token":{"value":"z:1"}}"#.utf8)
        #expect(try CloudWire.decode(ZoneChangesResponse.self, from: page).remainingEstimate == nil)
    }

    @Test func anUnknownErrorCodeIsMalformed() {
        var body = CloudErrorBody(.limitExceeded)
        body.code = "somethingNew"
        #expect(throws: CloudWireError.malformedError("somethingNew")) { try body.cloudError() }
    }

    @Test func eventsParseWhateverTheChunking() {
        let text =
            ChangeStreamEvent.heartbeat.text + ChangeStreamEvent.change.text + "event: other\r\ndata: x\r\n\r\n"
            + ChangeStreamEvent.change.text
        let bytes = Array(text.utf8)
        for chunkSize in [1, 2, 3, 7, bytes.count] {
            var parser = ServerSentEventParser()
            var events: [ChangeStreamEvent] = []
            for start in stride(from: 0, to: bytes.count, by: chunkSize) {
                events += parser.feed(bytes[start..<min(start + chunkSize, bytes.count)])
            }
            #expect(events == [.heartbeat, .change, .change], "chunks of \(chunkSize)")
        }
    }
}
