import Foundation
import StrataCloudWire
import StrataSync
import Testing

/// The requests end-to-end encryption adds (issue #28), at their bounds: a key of the wrong
/// size, names the document forbids and wrapped keys over their caps are permanent 4xx
/// answers naming what is wrong, never a trap or a 5xx.
@Suite(.timeLimit(.minutes(2)))
struct EncryptionRequestTests {
    typealias Answer = SchemaAgreementTests.Answer

    static func post(_ harness: ServiceHarness, _ path: String, user: String = "alice", _ body: String) async throws -> Answer {
        let token = try await harness.token(user: user)
        let response = try await harness.send(.POST, path, authorization: "Bearer \(token)", body: Data(body.utf8))
        let error = EdgeTests.errorBody(response.body)
        return Answer(status: response.status, field: error?.field, code: error?.code)
    }

    static func base64(_ count: Int) -> String { Data(repeating: 7, count: count).base64EncodedString() }

    @Test func aKeyIsExactly32BytesOfBase64() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            #expect(try await Self.post(harness, CloudRoute.publishPublicKey, "{\"key\":\"\(Self.base64(32))\"}").status == 200)
            for size in [0, 1, 31, 33, 1_000] {
                let answer = try await Self.post(harness, CloudRoute.publishPublicKey, "{\"key\":\"\(Self.base64(size))\"}")
                #expect(answer.status == 400, "\(size): \(answer)")
                #expect(answer.field == "key", "\(size): \(answer)")
                #expect(answer.code == "invalidRequest", "\(size): \(answer)")
            }
            for body in ["{\"key\":\"not base64!\"}", "{\"key\":12}", "{}", "{\"key\":null}"] {
                #expect(try await Self.post(harness, CloudRoute.publishPublicKey, body).status == 400, "\(body)")
            }
            let found = try await Self.post(harness, CloudRoute.publicKeys, user: "bob", "{\"users\":[\"alice\",\"carol\"]}")
            #expect(found.status == 200)
        }
    }

    @Test func aLookupNamesValidUsersWithinTheItemLimit() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let nul = try await Self.post(harness, CloudRoute.publicKeys, "{\"users\":[\"bob\",\"a\\u0000b\"]}")
            #expect(nul.status == 400)
            #expect(nul.field == "users[1]")
            let long = try await Self.post(harness, CloudRoute.publicKeys, "{\"users\":[\"\(String(repeating: "u", count: 257))\"]}")
            #expect(long.status == 400)
            #expect(long.field == "users[0]")
            let users = (0...400).map { "\"u\($0)\"" }.joined(separator: ",")
            let over = try await Self.post(harness, CloudRoute.publicKeys, "{\"users\":[\(users)]}")
            #expect(over.status == 413)
            #expect(over.code == "limitExceeded")
            #expect(try await Self.post(harness, CloudRoute.publicKeys, "{\"users\":[]}").status == 200)
            #expect(try await Self.post(harness, CloudRoute.publicKeys, "{\"users\":\"bob\"}").status == 400)
        }
    }

    @Test func aLookupAnswersTheKeysFoundInBase64() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            _ = try await Self.post(harness, CloudRoute.publishPublicKey, "{\"key\":\"\(Self.base64(32))\"}")
            let token = try await harness.token(user: "bob")
            let response = try await harness.send(
                .POST, CloudRoute.publicKeys, authorization: "Bearer \(token)", body: Data("{\"users\":[\"alice\",\"carol\"]}".utf8))
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "{\"keys\":{\"alice\":\"\(Self.base64(32))\"}}")
        }
    }

    static func saveShare(_ harness: ServiceHarness, wrappedKeys: String) async throws -> Answer {
        let body = """
            {"share":{"rootRecordID":{"name":"g1","zone":{"name":"games","owner":"alice"}},"publicPermission":"none",\
            "participants":[],"wrappedKeys":\(wrappedKeys)}}
            """
        return try await post(harness, CloudRoute.database(.private, .saveShare), body)
    }

    @Test func wrappedKeysAreNamedLikeEverythingElseAndCapped() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let nul = try await Self.saveShare(harness, wrappedKeys: "{\"a\\u0000\":\"AA==\"}")
            #expect(nul.status == 400)
            #expect(nul.field == "share.wrappedKeys")
            let notBase64 = try await Self.saveShare(harness, wrappedKeys: "{\"a\":\"%%\"}")
            #expect(notBase64.status == 400)
            let many = (0...CloudShare.maximumWrappedKeys).map { "\"k\($0)\":\"AA==\"" }.joined(separator: ",")
            let tooMany = try await Self.saveShare(harness, wrappedKeys: "{\(many)}")
            #expect(tooMany.status == 413)
            #expect(tooMany.code == "limitExceeded")
            let tooBig = try await Self.saveShare(harness, wrappedKeys: "{\"k\":\"\(Self.base64(CloudShare.maximumWrappedKeyBytes))\"}")
            #expect(tooBig.status == 413)
            // Within the caps the share reaches the cloud, which knows no such root.
            let fine = try await Self.saveShare(harness, wrappedKeys: "{\"k\":\"AA==\"}")
            #expect(fine.status == 404)
        }
    }

    @Test func aChunkMayBeSealedButNoOtherEncodingIsKnown() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            func upload(encoding: Int, data: Data) async throws -> Answer {
                let crc = CloudAsset.checksum(ofChunk: 0, data: data)
                let body = """
                    {"assets":[{"hash":"\(String(repeating: "e", count: 64))","size":\(data.count),"chunkSize":1024,\
                    "chunks":[{"data":"\(data.base64EncodedString())","encoding":\(encoding),"size":\(data.count),"crc32":\(crc)}]}]}
                    """
                return try await Self.post(harness, CloudRoute.database(.private, .uploadAssets), body)
            }
            #expect(try await upload(encoding: CloudAsset.Chunk.sealedEncoding, data: Data("sealed".utf8)).status == 200)
            let unknown = try await upload(encoding: 3, data: Data("x".utf8))
            #expect(unknown.status == 400)
            #expect(unknown.field == "assets[0].chunks[0].encoding")
        }
    }
}
