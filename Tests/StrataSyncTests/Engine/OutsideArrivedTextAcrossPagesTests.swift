// A record kept aside in one page (its parent not here yet) and applied when a later page
// brings the parent: its metadata JSON must read back as the record, whether it is applied by
// the retry (decoded from the aside table: no text of its own; the later page's texts are for
// other records) or arrives again in the later page, spelled differently, with the same tag.
import Foundation
import StrataSQLite
import Testing

@testable import StrataSync

@Suite(.timeLimit(.minutes(1)))
struct OutsideArrivedTextAcrossPagesTests {
    static let child =
        #" { "type" : "players", "parent" : {"zone": {"owner": "alice", "name": "strata.default"}, "name": "g9:games"}, "#
        + #""fields": {"name": {"text": {"_0": "Ann \u00e9😀"}}, "gameID": {"text": {"_0": "g9"}}}, "changeTag": "tp1", "#
        + #""fieldVersions": {"name": "5.0@there", "gameID": "5.0@there"}, "#
        + #""id": {"name": "p1:players", "zone": {"name": "strata.default", "owner": "alice"}} } "#
    static let childAgain =
        #"{"changeTag":"tp1","fieldVersions":{"gameID":"5.0@there","name":"5.0@there"},"#
        + #""fields":{"gameID":{"text":{"_0":"g9"}},"name":{"text":{"_0":"Ann é😀"}}},"#
        + #""id":{"name":"p1:players","zone":{"name":"strata.default","owner":"alice"}},"#
        + #""parent":{"name":"g9:games","zone":{"name":"strata.default","owner":"alice"}},"type":"players"}"#
    static let parent =
        #"{"changeTag":"tg9","fieldVersions":{"score":"5.0@there","title":"5.0@there"},"#
        + #""fields":{"score":{"integer":{"_0":9}},"title":{"text":{"_0":"nine"}}},"#
        + #""id":{"name":"g9:games","zone":{"name":"strata.default","owner":"alice"}},"type":"games"}"#

    @Test(arguments: [false, true])
    func aRecordKeptAsideStoresJSONThatReadsBackAsItself(childInLaterPage: Bool) async throws {
        let (queue, plain) = try await ApplyingPageTests.database(ApplyingPageTests.schema)
        let first = [try ApplyingPageTests.pageRecord(Self.child)]
        let second =
            [try ApplyingPageTests.pageRecord(Self.parent)] + (childInLaterPage ? [try ApplyingPageTests.pageRecord(Self.childAgain)] : [])
        var one = plain
        one.encoded = EncodedRecords(first)
        let firstIncoming = one
        let firstReport = try await queue.write { db in try firstIncoming.apply(records: first, tombstones: [], in: db) }
        #expect(firstReport.waitingForParent == ["p1:players"])
        var two = plain
        two.encoded = EncodedRecords(second)
        let secondIncoming = two
        _ = try await queue.write { db in try secondIncoming.apply(records: second, tombstones: [], in: db) }

        let (stored, names, waiting) = try await queue.read { db in
            (
                try db.fetchAll(
                    sql: """
                        SELECT lastKnownServerRecord, fieldVersions, json_extract(lastKnownServerRecord, '$.fields.name.text._0'),
                            serverChangeTag
                        FROM strata_sync.metadata WHERE recordType = 'players'
                        """
                ) { row in (try row[0] as String, try row[1] as String, try row[2] as String?, try row[3] as String?) },
                try String.fetchAll(db, sql: "SELECT name FROM players"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.unsynced_records")
            )
        }
        #expect(names == ["Ann é😀"])
        #expect(waiting == 0)
        #expect(stored.count == 1)
        guard let row = stored.first else { return }
        #expect(try SyncJSON.decode(CloudRecord.self, from: row.0) == first[0], "\(row.0)")
        #expect(try SyncJSON.versions(row.1) == first[0].fieldVersions, "\(row.1)")
        #expect(row.2 == "Ann é😀")
        #expect(row.3 == "tp1")
        // Never the parent's text, nor another record's: the stored JSON names this record.
        #expect(try SyncJSON.decode(CloudRecord.self, from: row.0).id.name == "p1:players")
    }
}
