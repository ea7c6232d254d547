import Crypto
import Foundation
import StrataCloudService
import StrataCloudWire
import StrataSync
import Testing

/// Outside tests: every integer field of an uploaded asset (and of other requests) answers a
/// number that is not whole, or out of range, with a 400 naming the field; whole numbers the
/// decoder accepted before (071adee, a synthesized `Codable`) are still accepted.
@Suite(.timeLimit(.minutes(2)))
struct OutsideAssetNumberTests {
    /// The asset as 071adee decoded it: synthesized `Codable`.
    struct EarlierAsset: Decodable {
        var hash: String
        var size: Int64
        var chunkSize: Int64
        var chunks: [Chunk]
        struct Chunk: Decodable {
            var data: Data
            var encoding: Int
            var size: Int64
            var crc32: UInt32
        }
    }
    struct EarlierUpload: Decodable { var assets: [EarlierAsset] }

    /// A whole asset: "hi" stored as is.
    static let content = Data("hi".utf8)
    static var hash: String { SHA256.hash(data: content).map { String(format: "%02x", $0) }.joined() }
    static var crc: UInt32 { CloudAsset.checksum(ofChunk: 0, data: content) }

    /// The upload body with `field` (one of "size", "chunkSize", "encoding", "chunk size",
    /// "crc32") written as `number`.
    static func body(_ field: String, _ number: String) -> String {
        var chunk = ["data": "\"\(content.base64EncodedString())\"", "encoding": "0", "size": "2", "crc32": "\(crc)"]
        var asset = ["size": "2", "chunkSize": "2"]
        switch field {
        case "chunk size": chunk["size"] = number
        case "encoding", "crc32": chunk[field] = number
        default: asset[field] = number
        }
        let chunkJSON = chunk.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
        return """
            {"assets":[{"hash":"\(hash)","size":\(asset["size"]!),"chunkSize":\(asset["chunkSize"]!),"chunks":[{\(chunkJSON)}]}]}
            """
    }

    static let paths = [
        ("size", "assets[0].size"), ("chunkSize", "assets[0].chunkSize"), ("encoding", "assets[0].chunks[0].encoding"),
        ("chunk size", "assets[0].chunks[0].size"), ("crc32", "assets[0].chunks[0].crc32"),
    ]

    static func upload(_ harness: ServiceHarness, _ token: String, _ body: String) async throws -> (Int, CloudErrorBody?) {
        let response = try await harness.send(
            .POST, CloudRoute.database(.private, .uploadAssets), authorization: "Bearer \(token)", body: Data(body.utf8))
        return (response.status, EdgeTests.errorBody(response.body))
    }

    @Test func aWholeAssetIsStored() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            let (status, error) = try await Self.upload(harness, token, Self.body("size", "2"))
            #expect(status == 200, "\(String(describing: error))")
        }
    }

    /// Numbers that are not whole, in every integer field: 400 naming that field.
    @Test(arguments: paths)
    func aNumberNotWholeNamesTheField(_ field: String, _ path: String) async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            for number in [
                "2.5", "1e30", "-0.5", "0.5", "1.5e0", "2.000001", "1e-7", "-1e30", "1e400", "-1e400", "1e-400",
                "123456789012345678901234567890.5",
                // Not whole, but whole once read as a `Double`: underflow to 0, or rounding.
                "-1e-400", "1E-400", "0.0000000000000000000000000000000000000000000000000001e-400", "2.0000000000000001",
                "4503599627370496.5", "1.9999999999999999",
            ] {
                let (status, error) = try await Self.upload(harness, token, Self.body(field, number))
                #expect(status == 400, "\(field) \(number)")
                #expect(
                    error?.field == path,
                    "\(field) \(number): \(String(describing: error?.field)) \(String(describing: error?.message))")
            }
        }
    }

    /// Whole numbers out of the field's range: 400 naming that field, never "body".
    @Test(arguments: paths)
    func anIntegerOutOfRangeNamesTheField(_ field: String, _ path: String) async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            var numbers = [
                "9223372036854775808", "-9223372036854775809", "18446744073709551616", "1e19", "-1e19", "99999999999999999999999",
            ]
            if field == "crc32" { numbers += ["-1", "4294967296", "-4294967295"] }
            if field == "encoding" { numbers += ["-1", "3"] }
            if field != "crc32" && field != "encoding" { numbers += ["-1"] }
            for number in numbers {
                let (status, error) = try await Self.upload(harness, token, Self.body(field, number))
                #expect(status == 400 || status == 422, "\(field) \(number): \(status)")
                if status == 400 {
                    #expect(
                        error?.field == path,
                        "\(field) \(number): \(String(describing: error?.field)) \(String(describing: error?.message))")
                }
            }
        }
    }

    /// Whole numbers written as reals: what 071adee's decoder accepted is still accepted (a
    /// stored asset), what it refused still refused, naming the field.
    @Test(arguments: paths)
    func wholeNumbersWrittenOtherwiseAreReadAsBefore(_ field: String, _ path: String) async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            let value: String =
                switch field {
                case "encoding": "0"
                case "crc32": "\(Self.crc)"
                default: "2"
                }
            var spellings = ["\(value).0", "\(value)e0", "\(value)E0", "\(value).000", "-0"]
            if value != "0" { spellings += ["\(value)0e-1", "\(value)00E-2", "0.\(value)e\(value.count)", "\(value).0e+0"] }
            for number in spellings {
                let body = Self.body(field, number)
                let earlier = Result { try CloudWire.makeDecoder().decode(EarlierUpload.self, from: Data(body.utf8)) }
                let (status, error) = try await Self.upload(harness, token, body)
                switch earlier {
                case .success(let upload):
                    // Whole numbers the earlier decoder read; "-0" is 0, which is only right for the encoding.
                    let earlierValue: String =
                        switch field {
                        case "size": "\(upload.assets[0].size)"
                        case "chunkSize": "\(upload.assets[0].chunkSize)"
                        case "encoding": "\(upload.assets[0].chunks[0].encoding)"
                        case "crc32": "\(upload.assets[0].chunks[0].crc32)"
                        default: "\(upload.assets[0].chunks[0].size)"
                        }
                    if earlierValue == value {
                        #expect(status == 200, "\(field) \(number) was accepted at 071adee: \(status) \(String(describing: error))")
                    } else {
                        #expect(status != 200 && error?.field != "body", "\(field) \(number): \(status) \(String(describing: error))")
                    }
                case .failure:
                    #expect(status == 400, "\(field) \(number)")
                    #expect(error?.field == path, "\(field) \(number) refused at 071adee: \(String(describing: error?.field))")
                }
            }
        }
    }

    /// Other requests' integer fields, the same way.
    @Test func otherRequestsIntegerFieldsNameTheirField() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            // Control: the same record with a whole size is read (whatever the backend says of it).
            let control = """
                {"saving":[{"id":{"name":"g","zone":{"name":"games","owner":"alice"}},"type":"games",\
                "fields":{"photo":{"asset":{"_0":{"hash":"\(Self.hash)","size":2}}}},"fieldVersions":{}}],"deleting":[]}
                """
            let controlResponse = try await harness.send(
                .POST, CloudRoute.database(.private, .modifyRecords), authorization: "Bearer \(token)", body: Data(control.utf8))
            #expect(
                EdgeTests.errorBody(controlResponse.body)?.field != "body",
                "control: \(controlResponse.status) \(String(decoding: controlResponse.body, as: UTF8.self))")
            let zone = #"{"name":"z","owner":"alice"}"#
            for number in [
                "2.5", "1e30", "-0.5", "1e400", "9223372036854775808", "99999999999999999999999", "1e-400", "2.0000000000000001",
                "4503599627370496.5",
            ] {
                let cases = [
                    (CloudRoute.database(.private, .fetchZoneChanges), #"{"zone":\#(zone),"limit":\#(number)}"#, "limit"),
                    (
                        CloudRoute.database(.private, .fetchDatabaseChanges), #"{"firstPages":[{"zone":\#(zone),"limit":\#(number)}]}"#,
                        "firstPages[0].limit"
                    ),
                    (
                        CloudRoute.database(.private, .fetchDatabaseChanges),
                        #"{"firstPages":[{"zone":\#(zone),"limit":5},{"zone":\#(zone),"limit":\#(number)}]}"#, "firstPages[1].limit"
                    ),
                ]
                for (route, body, path) in cases {
                    let response = try await harness.send(.POST, route, authorization: "Bearer \(token)", body: Data(body.utf8))
                    let error = EdgeTests.errorBody(response.body)
                    #expect(response.status == 400, "\(path) \(number)")
                    #expect(error?.field == path, "\(path) \(number): \(String(describing: error?.field))")
                }
                // An asset reference's size in a record's field.
                let record = """
                    {"saving":[{"id":{"name":"g","zone":{"name":"games","owner":"alice"}},"type":"games",\
                    "fields":{"photo":{"asset":{"_0":{"hash":"\(Self.hash)","size":\(number)}}}},"fieldVersions":{}}],"deleting":[]}
                    """
                let response = try await harness.send(
                    .POST, CloudRoute.database(.private, .modifyRecords), authorization: "Bearer \(token)", body: Data(record.utf8))
                let error = EdgeTests.errorBody(response.body)
                #expect(response.status == 400, "asset reference size \(number)")
                #expect(
                    error?.field?.hasSuffix("photo.asset._0.size") == true,
                    "asset reference size \(number): \(response.status) \(String(describing: error?.field)) \(String(describing: error?.message))"
                )
            }
        }
    }

    /// A record's integer value of the same shapes: a 400 naming the field, never a value
    /// rounded or underflowed into the row of every device.
    @Test func aRecordsIntegerValueThatIsNotWholeNamesTheField() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let token = try await harness.token(user: "alice")
            func save(_ number: String) async throws -> (Int, CloudErrorBody?) {
                let record = """
                    {"saving":[{"id":{"name":"g","zone":{"name":"games","owner":"alice"}},"type":"games",\
                    "fields":{"score":{"integer":{"_0":\(number)}}},"fieldVersions":{}}],"deleting":[]}
                    """
                let response = try await harness.send(
                    .POST, CloudRoute.database(.private, .modifyRecords), authorization: "Bearer \(token)", body: Data(record.utf8))
                return (response.status, EdgeTests.errorBody(response.body))
            }
            // Control: whole numbers, however written, are read (whatever the backend says of them).
            for number in ["7", "7.0", "70e-1", "-0"] {
                let (status, error) = try await save(number)
                #expect(status != 400 || error?.field?.contains("score") != true, "\(number): \(status) \(String(describing: error))")
            }
            for number in ["2.5", "1e-400", "-1e-400", "2.0000000000000001", "4503599627370496.5", "1.9999999999999999", "1e400"] {
                let (status, error) = try await save(number)
                #expect(status == 400, "score \(number): \(status)")
                #expect(
                    error?.field?.contains("score") == true,
                    "score \(number): \(String(describing: error?.field)) \(String(describing: error?.message))")
            }
        }
    }
}
