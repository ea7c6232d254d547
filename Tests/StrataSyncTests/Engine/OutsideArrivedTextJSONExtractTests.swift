// Defects 2 and 3: the stored text keeps the page's own spelling of keys and timestamps, so
// `json_extract` (which SyncMetadata.swift and Documentation/Sync.md promise "reads it either
// way") answers differently from the record the engine applied. Failed before such texts
// were refused for keeping, on SQLite 3.40.1, which compares object labels unescaped.
import Foundation
import StrataSQLite
import Testing

@testable import StrataSync

@Suite(.timeLimit(.minutes(1)))
struct OutsideArrivedTextJSONExtractTests {
    typealias StoredRow = (key: String, record: String, versions: String, titleVersion: String?, title: String?)

    /// Applies `texts` as one fetched page, as the engine does (its texts written beforehand).
    static func apply(_ texts: [String]) async throws -> (page: [CloudRecord], rows: [StoredRow], titles: [String]) {
        let (queue, plain) = try await ApplyingPageTests.database(ApplyingPageTests.schema)
        let page = try texts.map { try ApplyingPageTests.pageRecord($0) }
        // Neither spelling is the one Strata writes: the text is not kept, the record is
        // written again (`CloudRecord.init(readingKeepingText:)`).
        #expect(page.allSatisfy { $0.arrivedText == nil })
        var prepared = plain
        prepared.encoded = EncodedRecords(page)
        let incoming = prepared
        _ = try await queue.write { db in try incoming.apply(records: page, tombstones: [], in: db) }
        let rows = try await queue.read { db in
            try db.fetchAll(
                sql: """
                    SELECT recordPrimaryKey, lastKnownServerRecord, fieldVersions, json_extract(fieldVersions, '$.title'),
                        json_extract(lastKnownServerRecord, '$.fields.title.text._0')
                    FROM strata_sync.metadata ORDER BY recordPrimaryKey
                    """
            ) { row -> StoredRow in
                (
                    key: try row[0] as String, record: try row[1] as String, versions: try row[2] as String,
                    titleVersion: try row[3] as String?, title: try row[4] as String?
                )
            }
        }
        let titles = try await queue.read { db in try String.fetchAll(db, sql: "SELECT title FROM games ORDER BY id") }
        return (page, rows, titles)
    }

    /// A page whose JSON spells the column name with an escape (`"ti\u0074le"`, legal JSON for
    /// "title", what e.g. Python's `json.dumps` or a proxy may write): the row is applied, the
    /// stored JSON decodes, but `json_extract(..., '$.title')` finds nothing in the stored text.
    @Test func anEscapedColumnNameIsStillFoundByJSONExtract() async throws {
        let text =
            #"{"changeTag":"t1","fieldVersions":{"ti\u0074le":"5.0@there","score":"5.0@there"},"#
            + #""fields":{"ti\u0074le":{"text":{"_0":"Poker"}},"score":{"integer":{"_0":1}}},"#
            + #""id":{"name":"g1:games","zone":{"name":"strata.default","owner":"alice"}},"type":"games"}"#
        let (page, rows, titles) = try await Self.apply([text])
        #expect(titles == ["Poker"])
        #expect(rows.count == 1)
        guard let row = rows.first else { return }
        #expect(try SyncJSON.decode(CloudRecord.self, from: row.record) == page[0])
        #expect(try SyncJSON.versions(row.versions) == page[0].fieldVersions)
        // What the documentation promises; NULL on SQLite 3.40.1 with the arrived text.
        #expect(row.titleVersion == "5.0@there", "\(row.versions)")
        #expect(row.title == "Poker", "\(row.record)")
    }

    /// A page whose timestamp is spelled with leading zeros (`HybridTimestamp.init?(_:)`
    /// accepts them, so the fast reader does): the stored versions' text says "0005.00@there",
    /// not the version's own text "5.0@there" that `json_extract` gave before this change.
    @Test func aTimestampSpelledWithLeadingZerosReadsAsItsCanonicalText() async throws {
        let text =
            #"{"changeTag":"t2","fieldVersions":{"title":"0005.00@there","score":"5.0@there"},"#
            + #""fields":{"title":{"text":{"_0":"two"}},"score":{"integer":{"_0":2}}},"#
            + #""id":{"name":"g2:games","zone":{"name":"strata.default","owner":"alice"}},"type":"games"}"#
        let (page, rows, _) = try await Self.apply([text])
        #expect(rows.count == 1)
        guard let row = rows.first else { return }
        #expect(try SyncJSON.versions(row.versions) == page[0].fieldVersions)
        #expect(page[0].fieldVersions["title"]?.description == "5.0@there")
        #expect(row.titleVersion == page[0].fieldVersions["title"]?.description, "\(row.versions)")
    }
}
