import Foundation
import StrataCloudClient
import StrataCloudWire
import StrataSync
import Testing

/// An outside tester's attacks on `modifyRecords`' `answer` field and on `GET /v1/account`
/// (Cloud.md, "The API"; cloud-api.openapi.yaml). Expectations come from the documentation.
@Suite(.timeLimit(.minutes(3)))
struct OutsideAnswerTests {
    static let zoneJSON = #"{"name":"strata.default","owner":"alice"}"#
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    static func recordJSON(_ name: String, text: String = "x", tag: String? = nil, zone: String = zoneJSON) -> String {
        let tagPart = tag.map { #","changeTag":"\#($0)""# } ?? ""
        return
            #"{"id":{"name":"\#(name)","zone":\#(zone)},"type":"t","fields":{"a":{"text":{"_0":"\#(text)"}}},"fieldVersions":{}\#(tagPart)}"#
    }

    static func idJSON(_ name: String, zone: String = zoneJSON) -> String { #"{"name":"\#(name)","zone":\#(zone)}"# }

    struct Raw {
        let harness: ServiceHarness
        let token: String

        init(_ harness: ServiceHarness, user: String = "alice") async throws {
            self.harness = harness
            token = try await harness.token(user: user)
            let made = try await post(.saveZones, #"{"zones":[\#(OutsideAnswerTests.zoneJSON),{"name":"second","owner":"alice"}]}"#)
            #expect(made.status == 200, "\(made.text)")
        }

        func post(_ operation: CloudOperation, _ body: String) async throws -> (status: Int, text: String, json: Any?) {
            let response = try await harness.send(
                .POST, CloudRoute.database(.private, operation), authorization: "Bearer \(token)", body: Data(body.utf8))
            return (response.status, String(decoding: response.body, as: UTF8.self), try? JSONSerialization.jsonObject(with: response.body))
        }

        func modify(_ body: String) async throws -> (status: Int, text: String, json: Any?) { try await post(.modifyRecords, body) }
    }

    static func saveResults(_ json: Any?) -> [[String: Any]] {
        ((json as? [String: Any])?["saveResults"] as? [[String: Any]]) ?? []
    }

    static func field(_ text: String) -> String? { EdgeTests.errorBody(Data(text.utf8))?.field }

    // MARK: - The field's shapes

    /// Every value of `answer` that is not one of the two names is a permanent 400 naming it.
    @Test(arguments: [
        #"1"#, #"true"#, #"[]"#, #"["changeTags"]"#, #"{}"#, #"{"changeTags":true}"#, #""""#, #""ChangeTags""#,
        #""changetags""#, #""changeTags ""#, #"" records""#, #""RECORDS""#, #""changeTag""#, #""record""#,
        #""changeTags\u0000""#, #"1e400"#, #"-0"#,
    ])
    func anUnknownAnswerIs400NamingTheField(value: String) async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let raw = try await Raw(harness)
            let response = try await raw.modify(#"{"saving":[\#(Self.recordJSON("r"))],"deleting":[],"answer":\#(value)}"#)
            #expect(response.status == 400, "answer \(value): \(response.status) \(response.text)")
            #expect(Self.field(response.text) == "answer", "answer \(value): \(response.text)")
        }
    }

    /// `null`: the document's schema says a string of two values (no null); absence is the
    /// default. Whichever the service picks, it must be no 5xx and, if 200, whole records.
    @Test func aNullAnswer() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let raw = try await Raw(harness)
            let response = try await raw.modify(#"{"saving":[\#(Self.recordJSON("r"))],"deleting":[],"answer":null}"#)
            #expect(response.status == 200 || response.status == 400, "\(response.status) \(response.text)")
            if response.status == 200 {
                #expect(Self.saveResults(response.json).first?["record"] != nil, "\(response.text)")
            } else {
                #expect(Self.field(response.text) == "answer", "\(response.text)")
            }
            // The document says: absent or null answers with records (as `since` on the fetches).
            #expect(response.status == 200, "null is the default answer: \(response.text)")
        }
    }

    /// A key given twice: no 5xx; and whatever wins, the answer matches one value consistently.
    @Test(arguments: [
        (#""changeTags""#, #""records""#), (#""records""#, #""changeTags""#), (#""bogus""#, #""changeTags""#),
        (#""changeTags""#, #""bogus""#),
    ])
    func aRepeatedAnswerKey(first: String, second: String) async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let raw = try await Raw(harness)
            let response = try await raw.modify(
                #"{"answer":\#(first),"saving":[\#(Self.recordJSON("r"))],"deleting":[],"answer":\#(second)}"#)
            #expect(response.status < 500, "\(response.status) \(response.text)")
            if response.status == 200, let result = Self.saveResults(response.json).first {
                #expect((result["record"] == nil) != (result["changeTag"] == nil), "\(response.text)")
            }
            // Whether the record landed must agree with the status.
            let fetched = try await raw.post(.fetchRecords, #"{"ids":[\#(Self.idJSON("r"))]}"#)
            let landed = !fetched.text.contains("unknownItem")
            #expect(landed == (response.status == 200), "status \(response.status), landed \(landed): \(fetched.text)")
            print("outside: repeated answer \(first),\(second) -> \(response.status) \(response.text.prefix(200))")
        }
    }

    /// `records` and absent answer whole records; `changeTags` answers `{id, changeTag}` alone.
    @Test func theThreeValidShapes() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let raw = try await Raw(harness)
            for (name, answer) in [("r1", nil), ("r2", #""records""#), ("r3", #""changeTags""#)] as [(String, String?)] {
                let tail = answer.map { #","answer":\#($0)"# } ?? ""
                let response = try await raw.modify(#"{"saving":[\#(Self.recordJSON(name))],"deleting":[]\#(tail)}"#)
                #expect(response.status == 200, "\(response.text)")
                let result = try #require(Self.saveResults(response.json).first)
                if answer == #""changeTags""# {
                    #expect(Set(result.keys) == ["id", "changeTag"], "\(response.text)")
                } else {
                    #expect(Set(result.keys) == ["id", "record"], "\(response.text)")
                }
            }
        }
    }

    /// Accepted saves, conflicts, a zone that fails as a whole and deletes, in one request that
    /// asked for tags: each result has exactly one of record, changeTag and error, and a
    /// conflict's server record is whole.
    @Test func tagsMixedWithFailures() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let raw = try await Raw(harness)
            let first = try await raw.modify(#"{"saving":[\#(Self.recordJSON("old"))],"deleting":[]}"#)
            #expect(first.status == 200)
            let zone2 = #"{"name":"second","owner":"alice"}"#
            let missingZone = #"{"name":"nowhere","owner":"alice"}"#
            let body = #"""
                {"answer":"changeTags","saving":[\#(Self.recordJSON("old", text: "stale")),\#(Self.recordJSON("new", zone: zone2)),\#(Self.recordJSON("sameZone")),\#(Self.recordJSON("lost", zone: missingZone))],
                 "deleting":[\#(Self.idJSON("ghost", zone: zone2)),\#(Self.idJSON("old"))]}
                """#
            let response = try await raw.modify(body)
            #expect(response.status == 200, "\(response.text)")
            let results = Self.saveResults(response.json)
            #expect(results.count == 4, "\(response.text)")
            for result in results {
                let present = ["record", "changeTag", "error"].filter { result[$0] != nil }
                #expect(present.count == 1, "\(result)")
            }
            func result(_ name: String) -> [String: Any]? {
                results.first { (($0["id"] as? [String: Any])?["name"] as? String) == name }
            }
            #expect(result("new")?["changeTag"] != nil, "\(response.text)")
            #expect(result("old")?["error"] != nil, "\(response.text)")
            #expect(result("sameZone")?["error"] != nil, "the zone is atomic: \(response.text)")
            #expect(result("lost")?["error"] != nil, "\(response.text)")
            // The conflict's server record is the whole stored record.
            #expect(response.text.contains(#""x""#), "the conflict carries the stored record: \(response.text)")
        }
    }

    /// A record saved twice in one request, answered with tags: the stored record is the last
    /// save, with the answered tag; through the Swift client too.
    @Test func aRecordSavedTwiceInOneRequest() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let raw = try await Raw(harness)
            let response = try await raw.modify(
                #"{"answer":"changeTags","saving":[\#(Self.recordJSON("twice", text: "first")),\#(Self.recordJSON("twice", text: "last"))],"deleting":[]}"#
            )
            #expect(response.status == 200 || response.status == 400, "\(response.text)")
            let fetched = try await raw.post(.fetchRecords, #"{"ids":[\#(Self.idJSON("twice"))]}"#)
            if response.status == 200 {
                let tags = Self.saveResults(response.json).compactMap { $0["changeTag"] as? String }
                #expect(!tags.isEmpty, "\(response.text)")
                #expect(fetched.text.contains(#""last""#), "\(fetched.text)")
                if let tag = tags.last { #expect(fetched.text.contains(tag), "answered tag \(tag), stored: \(fetched.text)") }
                #expect(Set(tags).count == tags.count, "one tag per result: \(tags)")
            }

            // Through the client.
            let database = try await harness.container(user: "alice").privateDatabase
            var a = CloudRecord(
                id: CloudRecordID(name: "twice2", zone: Self.zone), type: "t", fields: ["a": .text("first"), "only": .integer(1)])
            let b = CloudRecord(id: a.id, type: "t", fields: ["a": .text("last")])
            a.fieldVersions = [:]
            let result = try await database.modifyRecords(saving: [a, b], deleting: [])
            let answered = try result.saveResults[a.id]?.get()
            let stored = try await database.fetchRecords([a.id])[a.id]?.get()
            #expect(answered == stored, "answered \(String(describing: answered)), stored \(String(describing: stored))")
        }
    }

    /// Deletes only, asking for tags.
    @Test func deletesOnlyWithTags() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let raw = try await Raw(harness)
            _ = try await raw.modify(#"{"saving":[\#(Self.recordJSON("d1")),\#(Self.recordJSON("d2"))],"deleting":[]}"#)
            let response = try await raw.modify(
                #"{"answer":"changeTags","saving":[],"deleting":[\#(Self.idJSON("d1")),\#(Self.idJSON("d2")),\#(Self.idJSON("never"))]}"#)
            #expect(response.status == 200, "\(response.text)")
            let deletes = ((response.json as? [String: Any])?["deleteResults"] as? [[String: Any]]) ?? []
            #expect(deletes.count == 3, "\(response.text)")
            #expect(Self.saveResults(response.json).isEmpty)
            let empty = try await raw.modify(#"{"answer":"changeTags","saving":[],"deleting":[]}"#)
            #expect(empty.status == 200, "\(empty.text)")
        }
    }

    /// A request at the item limit asking for tags: every save answered with a tag, and the
    /// answer far smaller than the records answer; one over the limit is 413.
    @Test func aHugeRequestWithTags() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let raw = try await Raw(harness)
            let limit = CloudLimits().maximumItemsPerRequest
            let big = String(repeating: "y", count: 3_000)
            func body(_ count: Int, prefix: String, answer: String) -> String {
                let records = (0..<count).map { Self.recordJSON("\(prefix)\($0)", text: big) }.joined(separator: ",")
                return #"{"answer":"\#(answer)","saving":[\#(records)],"deleting":[]}"#
            }
            let tags = try await raw.modify(body(limit, prefix: "t", answer: "changeTags"))
            #expect(tags.status == 200, "\(tags.text.prefix(300))")
            #expect(Self.saveResults(tags.json).count == limit)
            #expect(Self.saveResults(tags.json).allSatisfy { $0["changeTag"] is String && $0["record"] == nil })
            let records = try await raw.modify(body(limit, prefix: "r", answer: "records"))
            #expect(records.status == 200)
            #expect(tags.text.utf8.count * 10 < records.text.utf8.count, "\(tags.text.utf8.count) vs \(records.text.utf8.count)")
            let over = try await raw.modify(body(limit + 1, prefix: "o", answer: "changeTags"))
            #expect(over.status == 413, "\(over.status) \(over.text.prefix(200))")
        }
    }

    // MARK: - The Swift client rebuilds what the service stored

    static func oddRecords() -> [CloudRecord] {
        let parent = CloudRecordID(name: "parent", zone: zone)
        let time = HybridTimestamp(milliseconds: -5, counter: 999_999_999, node: "nöde@x")
        let doubles: [Double] = [
            0.1 + 0.2, 1.7976931348623157e308, 5e-324, 2.2250738585072011e-308, -0.0, 123456789.123456789, 1e21, 1e-7,
            9007199254740993,
        ]
        var fields: [String: CloudValue] = [
            "null": .null, "min": .integer(.min), "max": .integer(.max), "empty": .text(""), "bytes": .bytes(Data()),
            "manyBytes": .bytes(Data((0..<1000).map { UInt8($0 % 256) })), "nfd": .text("e\u{301}"), "nfc": .text("\u{E9}"),
            "controls": .text("\u{1}\u{8}\t\n\r\u{1F}\u{7F}\u{2028}\u{2029}\"\\/"), "emoji": .text("👩‍👩‍👧‍👦🇫🇷"),
            "ünïcödé key": .integer(0),
        ]
        for (index, value) in doubles.enumerated() { fields["d\(index)"] = .real(value) }
        return [
            CloudRecord(id: parent, type: "parentType", fields: ["title": .text("p")]),
            CloudRecord(
                id: CloudRecordID(name: "odd: name/with?#&%20", zone: zone), type: "тип", fields: fields,
                fieldVersions: ["null": time, "notAField": time], parent: parent),
            CloudRecord(id: CloudRecordID(name: "bare", zone: zone), type: "t"),
        ]
    }

    /// Saved through the client (which asks for tags), the records it returns are exactly the
    /// records a fetch then reads, byte for byte (doubles by bit pattern, text by UTF-8).
    @Test func theClientRebuildsExactlyWhatWasStored() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let container = try await harness.container(user: "alice")
            let database = container.privateDatabase
            try await database.saveZones([Self.zone])
            var records = Self.oddRecords()
            for round in 0..<2 {
                let result = try await database.modifyRecords(saving: records, deleting: [])
                let fetched = try await database.fetchRecords(records.map(\.id))
                for record in records {
                    let answered = try #require(try result.saveResults[record.id]?.get(), "round \(round) \(record.id.name)")
                    let stored = try #require(try fetched[record.id]?.get())
                    #expect(answered == stored, "round \(round) \(record.id.name)")
                    #expect(answered.changeTag != nil && answered.changeTag != record.changeTag)
                    for (key, value) in stored.fields {
                        switch (value, answered.fields[key]) {
                        case (.real(let s), .real(let a)?): #expect(s.bitPattern == a.bitPattern, "\(key): stored \(s) answered \(a)")
                        case (.text(let s), .text(let a)?): #expect(Array(s.utf8) == Array(a.utf8), "\(key)")
                        default: break
                        }
                    }
                    #expect(Set(stored.fields.keys).map { Array($0.utf8) }.count == Set(answered.fields.keys).map { Array($0.utf8) }.count)
                    #expect(stored.fieldVersions == answered.fieldVersions, "\(record.id.name)")
                }
                // Round two: updates with the tags just answered.
                records = records.map { record in
                    var next = try! result.saveResults[record.id]!.get()
                    next.fields["round"] = .integer(Int64(round))
                    return next
                }
            }
            // A conflict through the client: the server record it carries is what is stored.
            var stale = Self.oddRecords()[2]
            stale.changeTag = "not-a-tag"
            let conflict = try await database.modifyRecords(saving: [stale], deleting: [])
            let stored = try await database.fetchRecords([stale.id])[stale.id]?.get()
            #expect(throws: CloudError.serverRecordChanged(try #require(stored))) { try conflict.saveResults[stale.id]?.get() }
        }
    }

    /// The client's records for saves the service refused are errors, never made-up records.
    @Test func theClientNeverInventsARecordForARefusedSave() async throws {
        try await ServiceHarness.with(cloud: MockCloud()) { harness in
            let database = try await harness.container(user: "alice").privateDatabase
            try await database.saveZones([Self.zone])
            let ok = CloudRecord(id: CloudRecordID(name: "ok", zone: Self.zone), type: "t", fields: ["a": .integer(1)])
            let orphan = CloudRecord(
                id: CloudRecordID(name: "orphan", zone: CloudZoneID(name: "nozone", owner: "alice")), type: "t")
            let child = CloudRecord(
                id: CloudRecordID(name: "child", zone: CloudZoneID(name: "other", owner: "alice")), type: "t",
                parent: CloudRecordID(name: "none", zone: CloudZoneID(name: "other", owner: "alice")))
            try await database.saveZones([CloudZoneID(name: "other", owner: "alice")])
            let result = try await database.modifyRecords(saving: [ok, orphan, child], deleting: [])
            #expect(try result.saveResults[ok.id]?.get() == (try await database.fetchRecords([ok.id])[ok.id]?.get()))
            #expect(throws: CloudError.self) { try result.saveResults[orphan.id]?.get() }
            #expect(throws: CloudError.self) { try result.saveResults[child.id]?.get() }
        }
    }

    // MARK: - GET /v1/account

    static func accountRequests(_ harness: ServiceHarness) async throws -> Int {
        try await AccountRequestTests.accountRequests(harness)
    }

    /// One request per call; every kind of refused token gives `noAccount` without a throw.
    @Test func theAccountInOneRequestAndRefusedTokens() async throws {
        let cloud = MockCloud()
        cloud.setAccountStatus(.restricted, for: "carol")
        try await ServiceHarness.with(cloud: cloud) { harness in
            let before = try await Self.accountRequests(harness)
            let container = try await harness.container(user: "ünïcödé user")
            #expect(try await container.account() == CloudAccount(status: .available, user: "ünïcödé user"))
            #expect(try await Self.accountRequests(harness) == before + 1)
            let expired = try await harness.token(user: "alice", expiresIn: .seconds(60), now: Date(timeIntervalSinceNow: -3_600))
            let otherKey = try await harness.token(user: "alice", key: "another-key-0123456789abcdefghij")
            for token in [expired, otherKey, "", "a.b.c", String(repeating: "x", count: 10_000)] {
                let account = try await harness.container(token: token).account()
                #expect(account == CloudAccount(status: .noAccount, user: nil), "token \(token.prefix(20)): \(account)")
            }
            // Another status from the backend: the status, and no user.
            let carol = try await harness.container(user: "carol").account()
            #expect(carol == CloudAccount(status: .restricted, user: nil), "\(carol)")
            // And the raw route: without a token 401, with another method 405.
            #expect(try await harness.send(.GET, CloudRoute.account).status == 401)
            let token = try await harness.token(user: "alice")
            let post = try await harness.send(.POST, CloudRoute.account, authorization: "Bearer \(token)", body: Data("{}".utf8))
            #expect(post.status == 405, "\(post.status)")
            let get = try await harness.send(.GET, CloudRoute.account, authorization: "Bearer \(token)")
            let json = try JSONSerialization.jsonObject(with: get.body) as? [String: Any]
            #expect(json?["status"] as? String == "available")
            #expect(json?["user"] as? String == "alice")
        }
    }

    /// The account agrees with the two older calls, for each status the backend can report.
    @Test(arguments: [CloudAccountStatus.available, .noAccount, .restricted, .temporarilyUnavailable, .couldNotDetermine])
    func theAccountAgreesWithTheStatusAndTheUser(status: CloudAccountStatus) async throws {
        let cloud = MockCloud()
        cloud.setAccountStatus(status, for: "dave")
        try await ServiceHarness.with(cloud: cloud) { harness in
            let container = try await harness.container(user: "dave")
            let account = try await container.account()
            #expect(account.status == status, "\(account)")
            #expect(account.user == (status == .available ? "dave" : nil), "\(account)")
            let older = try await container.accountStatus()
            #expect(older == account.status)
        }
    }
}
