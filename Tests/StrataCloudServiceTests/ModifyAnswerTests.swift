import Foundation
import StrataCloudWire
import StrataSync
import Testing

/// A modify request may ask for accepted saves to be answered with their new change tags
/// alone (issue #27: half a first sync's bytes, and the client's decoding of each record it
/// just sent). The default answer stays the whole record, readable on its own.
@Suite(.timeLimit(.minutes(2)))
struct ModifyAnswerTests {
    static let zone = CloudZoneID(name: "z", owner: "alice")
    static func record(_ name: String, tag: String? = nil) -> CloudRecord {
        CloudRecord(
            id: CloudRecordID(name: name, zone: zone), type: "t", fields: ["a": .text("é\"\n"), "b": .integer(.min)],
            fieldVersions: ["a": HybridTimestamp(milliseconds: 5, counter: 1, node: "n")], changeTag: tag)
    }

    /// Tags only: the result decoded against the request is the records sent, with the tags,
    /// in both JSON forms; errors travel as before.
    @Test func changeTagAnswersStandForTheRecordsSent() throws {
        let (a, b, c) = (Self.record("a"), Self.record("b"), Self.record("c"))
        var stored = a
        stored.changeTag = "t7"
        let result = CloudModifyResult(
            saveResults: [
                a.id: .success(stored), b.id: .failure(.serverRecordChanged(Self.record("b", tag: "t2"))),
                c.id: .failure(.batchRequestFailed(c.id)),
            ],
            deleteResults: [c.id: .success(())])
        let response = ModifyRecordsResponse(result, answer: .changeTags)
        let fast = try CloudWire.encode(response)
        let text = String(decoding: fast, as: UTF8.self)
        #expect(text.contains(#"{"changeTag":"t7","id":"#))
        #expect(fast == (try CloudWire.makeEncoder().encode(response)), "the hand-written form is JSONEncoder's")
        for decoded in [
            try CloudWire.decode(ModifyRecordsResponse.self, from: fast),
            try CloudWire.makeDecoder().decode(ModifyRecordsResponse.self, from: fast),
        ] {
            let back = try decoded.modifyResult(saving: [a, b, c])
            #expect(try back.saveResults[a.id]?.get() == stored)
            #expect(throws: CloudError.serverRecordChanged(Self.record("b", tag: "t2"))) { try back.saveResults[b.id]?.get() }
            #expect(throws: CloudError.batchRequestFailed(c.id)) { try back.saveResults[c.id]?.get() }
        }
    }

    /// A request that saved a record twice is answered for the last save.
    @Test func aRecordSavedTwiceStandsForItsLastSave() throws {
        var first = Self.record("a")
        first.fields["a"] = .text("first")
        let last = Self.record("a")
        var stored = last
        stored.changeTag = "t9"
        let response = ModifyRecordsResponse(CloudModifyResult(saveResults: [last.id: .success(stored)]), answer: .changeTags)
        #expect(try response.modifyResult(saving: [first, last]).saveResults[last.id]?.get() == stored)
    }

    /// A tag for a record the request did not save is a malformed answer, never a made-up record.
    @Test func aTagForARecordNotSentIsMalformed() throws {
        let response = ModifyRecordsResponse(
            CloudModifyResult(saveResults: [Self.record("a").id: .success(Self.record("a", tag: "t1"))]), answer: .changeTags)
        #expect(throws: CloudWireError.self) { try response.modifyResult(saving: [Self.record("b")]) }
        #expect(throws: CloudWireError.self) { try response.modifyResult() }
    }

    /// The request's field: absent is the default and writes nothing; both values read back
    /// equal in both forms.
    @Test func theRequestFieldIsOptional() throws {
        let plain = ModifyRecordsRequest(saving: [Self.record("a")], deleting: [])
        #expect(!String(decoding: try CloudWire.encode(plain), as: UTF8.self).contains("answer"))
        for answer in ModifyAnswer.allCases {
            let request = ModifyRecordsRequest(saving: [Self.record("a")], deleting: [], answer: answer)
            let fast = try CloudWire.encode(request)
            #expect(fast == (try CloudWire.makeEncoder().encode(request)))
            #expect(try CloudWire.decode(ModifyRecordsRequest.self, from: fast) == request)
        }
    }

    /// Through the service: the default answer carries records, `changeTags` carries tags, and
    /// an unknown value is a permanent 400 naming the field.
    @Test func theServiceAnswersAsAsked() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            let zone = #"{"name":"strata.default","owner":"alice"}"#
            let saveZone = try await harness.send(
                .POST, CloudRoute.database(.private, .saveZones), authorization: "Bearer \(token)",
                body: Data(#"{"zones":[\#(zone)]}"#.utf8))
            #expect(saveZone.status == 200)
            func modify(_ name: String, answer: String?) async throws -> (status: Int, body: String) {
                let record = CloudRecord(
                    id: CloudRecordID(name: name, zone: CloudZoneID(name: "strata.default", owner: "alice")), type: "t",
                    fields: ["a": .text("x")])
                var body = String(decoding: try CloudWire.encode(ModifyRecordsRequest(saving: [record], deleting: [])), as: UTF8.self)
                if let answer { body = #"{"answer":"\#(answer)","# + body.dropFirst() }
                let response = try await harness.send(
                    .POST, CloudRoute.database(.private, .modifyRecords), authorization: "Bearer \(token)", body: Data(body.utf8))
                return (response.status, String(decoding: response.body, as: UTF8.self))
            }
            let records = try await modify("r1", answer: nil)
            #expect(records.status == 200)
            #expect(records.body.contains(#""record":{"#), "\(records.body)")
            let tags = try await modify("r2", answer: "changeTags")
            #expect(tags.status == 200)
            #expect(tags.body.contains(#""changeTag":"#) && !tags.body.contains(#""record":"#), "\(tags.body)")
            let unknown = try await modify("r3", answer: "everything")
            #expect(unknown.status == 400)
            #expect(EdgeTests.errorBody(Data(unknown.body.utf8))?.field == "answer", "\(unknown.body)")
        }
    }
}
