import Foundation
import StrataCloudWire
import StrataSync
import Testing

/// The OpenAPI document (Documentation/cloud-api.openapi.yaml) and the service accept exactly
/// the same values, field by field, at every bound ±1: what the document allows is never
/// refused as malformed, and what it forbids is never accepted. Found by schemathesis
/// (`--checks all`, issue #25 finding 8); the document counts lengths in characters (Unicode
/// scalars), so the service does too.
@Suite(.timeLimit(.minutes(2)))
struct SchemaAgreementTests {
    struct Answer {
        var status: Int
        var field: String?
        var code: String?
    }

    static func json(_ value: String) -> String {
        String(decoding: (try? JSONEncoder().encode(value)) ?? Data(), as: UTF8.self)
    }

    /// One `modifyRecords` with a single record, its parts given as JSON text.
    static func save(
        _ harness: ServiceHarness, token: String, name: String = "g", changeTag: String? = nil,
        fieldVersions: [String: String] = [:], fields: String = "{}"
    ) async throws -> Answer {
        let versions = fieldVersions.map { "\(json($0.key)):\(json($0.value))" }.joined(separator: ",")
        let tag = changeTag.map { ",\"changeTag\":\(json($0))" } ?? ""
        let body = """
            {"saving":[{"id":{"name":\(json(name)),"zone":{"name":"games","owner":"alice"}},"type":"games",\
            "fields":\(fields),"fieldVersions":{\(versions)}\(tag)}],"deleting":[]}
            """
        let response = try await harness.send(
            .POST, CloudRoute.database(.private, .modifyRecords), authorization: "Bearer \(token)", body: Data(body.utf8))
        let error = EdgeTests.errorBody(response.body)
        return Answer(status: response.status, field: error?.field, code: error?.code)
    }

    @Test func namesAreCountedInCharactersAsTheDocumentCountsThem() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            // 256 four-byte characters: 1,024 UTF-8 bytes, within the document's 256.
            #expect(try await Self.save(harness, token: token, name: String(repeating: "😀", count: 256)).status == 200)
            let over = try await Self.save(harness, token: token, name: String(repeating: "a", count: 257))
            #expect(over.status == 400)
            #expect(over.field == "saving[0].id.name")
            #expect(try await Self.save(harness, token: token, changeTag: String(repeating: "0", count: 256)).status == 200)
            let longTag = try await Self.save(harness, token: token, changeTag: String(repeating: "0", count: 257))
            #expect(longTag.status == 400)
            #expect(longTag.field == "saving[0].changeTag")
        }
    }

    @Test func fieldVersionsFollowTheDocumentsPattern() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            let accepted = [
                "-7.3@n", "0.0@n", "123456789012345678.123456789@node", "000000000000000001.000000001@n",
                "1.1@" + String(repeating: "n", count: 252),
                // "@" or "." followed by what joins a Character to it: still the separators.
                "-77886.888@\u{1F3FB}f", "5.3@\u{301}n",
            ]
            for version in accepted {
                let answer = try await Self.save(harness, token: token, fieldVersions: ["title": version])
                #expect(answer.status == 200, "\(version.prefix(40)): \(answer)")
            }
            let refused = [
                "-7.3@", "+5.3@n", "5.+3@n", " 5.3@n", "5.3 @n", "5.@n", ".3@n", "5.3n", "--5.3@n",
                "1234567890123456789.1@n", "1.1234567890@n", "5\u{301}.3@n", "5.3\u{301}@n", "1.1@" + String(repeating: "n", count: 253),
            ]
            for version in refused {
                let answer = try await Self.save(harness, token: token, fieldVersions: ["title": version])
                #expect(answer.status == 400, "\(version.prefix(40)): \(answer)")
                #expect(answer.field?.hasPrefix("saving[0].fieldVersions") == true, "\(version.prefix(40)): \(answer)")
            }
        }
    }

    @Test func bytesAreBase64OfAValidLength() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            for text in ["", "QQ==", "QUI=", "QUJD", "AAAAAA==", "+/+/", "AB==", "QUJ="] {
                let answer = try await Self.save(harness, token: token, fields: "{\"data\":{\"bytes\":{\"_0\":\(Self.json(text))}}}")
                #expect(answer.status == 200, "\(text): \(answer)")
            }
            for text in ["A", "QQ", "QQ=", "QUJ", "QUJDR", "Q===", "QQ==QQ==", "QQ =", "-_-_"] {
                let answer = try await Self.save(harness, token: token, fields: "{\"data\":{\"bytes\":{\"_0\":\(Self.json(text))}}}")
                #expect(answer.status == 400, "\(text): \(answer)")
            }
        }
    }

    @Test func aChunkLargerThanItsAssetsChunkSizeIsAnInvalidAsset() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            let hash = String(repeating: "0", count: 64)
            let body = """
                {"assets":[{"hash":"\(hash)","size":0,"chunkSize":1,\
                "chunks":[{"data":"","encoding":0,"size":9223372036854775806,"crc32":0}]}]}
                """
            let response = try await harness.send(
                .POST, CloudRoute.database(.private, .uploadAssets), authorization: "Bearer \(token)", body: Data(body.utf8))
            #expect(response.status == 422)
            #expect(EdgeTests.errorBody(response.body)?.code == "invalidAsset")
        }
    }

    /// A URL of the document's shape that names no share is `unknownItem` (404) with an
    /// empty record ID, never an error body whose record name is the URL (which may be longer
    /// than a name); only what the document forbids is 400.
    @Test func aShareURLThatNamesNoShareIsUnknownWithAnEmptyRecordID() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            func accept(_ url: String) async throws -> (Int, CloudErrorBody?) {
                let response = try await harness.send(
                    .POST, CloudRoute.acceptShare, authorization: "Bearer \(token)", body: Data("{\"url\":\(Self.json(url))}".utf8))
                return (response.status, EdgeTests.errorBody(response.body))
            }
            let longName = String(repeating: "n", count: 257)
            for url in [
                String(repeating: "0", count: 300), "strata-share://a/b", "strata-share://%FF/z/r",
                "strata-share://alice/games/\(longName)",
            ] {
                let (status, error) = try await accept(url)
                #expect(status == 404, "\(url.prefix(40))")
                #expect(error?.code == "unknownItem", "\(url.prefix(40))")
                #expect(error?.recordID == CloudRecordID(name: "", zone: CloudZoneID(name: "", owner: "")), "\(url.prefix(40))")
            }
            let (tooLong, error) = try await accept(String(repeating: "0", count: 9_249))
            #expect(tooLong == 400)
            #expect(error?.field == "url")
            #expect(try await accept(String(repeating: "0", count: 9_248)).0 == 404)
            #expect(try await accept("strata-share://a/b\u{0}/c").1?.field == "url")
        }
    }

    /// Optional fields may be absent or null, as the document says.
    @Test func optionalFieldsMayBeNull() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            let changes = try await harness.send(
                .POST, CloudRoute.database(.private, .fetchDatabaseChanges), authorization: "Bearer \(token)",
                body: Data("{\"since\":null}".utf8))
            #expect(changes.status == 200)
            let record = """
                {"saving":[{"id":{"name":"g","zone":{"name":"games","owner":"alice"}},"type":"games","fields":{},\
                "fieldVersions":{},"parent":null,"changeTag":null}],"deleting":[]}
                """
            let saved = try await harness.send(
                .POST, CloudRoute.database(.private, .modifyRecords), authorization: "Bearer \(token)", body: Data(record.utf8))
            #expect(saved.status == 200)
        }
    }

    /// Every value case is closed, as the document's `additionalProperties: false` says.
    @Test func valuesHaveExactlyOneCaseAndItsPayload() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            let hash = String(repeating: "0", count: 64)
            let accepted = [
                #"{"null":{}}"#, #"{"integer":{"_0":-9223372036854775808}}"#, #"{"real":{"_0":"NaN"}}"#,
                #"{"real":{"_0":1.5}}"#, #"{"text":{"_0":""}}"#, #"{"bytes":{"_0":"QQ=="}}"#,
                #"{"asset":{"_0":{"hash":"\#(hash)","size":0}}}"#,
            ]
            for value in accepted {
                #expect(try await Self.save(harness, token: token, fields: "{\"f\":\(value)}").status == 200, "\(value)")
            }
            let refused = [
                #"{"asset":{"_0":{"hash":"\#(hash)","size":0}},"x":42}"#, #"{"null":{"x":1}}"#, #"{"integer":{"_0":1,"_1":2}}"#,
                #"{}"#, #"{"integer":{}}"#, #"{"integer":{"x":1}}"#, #"{"number":{"_0":1}}"#, #"{"integer":{"_0":9223372036854775808}}"#,
                #"{"text":{"_0":"a"},"bytes":{"_0":""}}"#,
            ]
            for value in refused {
                let answer = try await Self.save(harness, token: token, fields: "{\"f\":\(value)}")
                #expect(answer.status == 400, "\(value): \(answer)")
            }
        }
    }
}
