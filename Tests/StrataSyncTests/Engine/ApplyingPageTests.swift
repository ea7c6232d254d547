import Foundation
import Logging
import StrataSQLite
import StrataSyncTestSupport
import Testing

@testable import StrataSync

/// A page of fetched records applied in one pass: what the pass reads once for the whole page
/// (the records' metadata, whether records wait aside, which rows exist) and the savepoint it
/// leaves out must not change what a record-by-record apply would do.
@Suite(.timeLimit(.minutes(1)))
struct ApplyingPageTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    static func database(_ schema: String) async throws -> (DatabaseQueue, IncomingChanges) {
        let queue = try DatabaseQueue()
        let tables = try await queue.write { db in
            try db.execute(sql: schema)
            try db.attachMetadatabase(containerIdentifier: "tests")
            return try SyncSchema.read(tables: ["games", "players"], in: db)
        }
        let clock = HybridLogicalClock(node: "here", physicalTime: { 1_700_000_000_000 })
        return (queue, IncomingChanges(schema: tables, clock: clock, logger: Logger(label: "tests")))
    }

    static let schema = """
        CREATE TABLE games (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, score INTEGER);
        CREATE TABLE players (id TEXT PRIMARY KEY NOT NULL, gameID TEXT REFERENCES games(id) ON DELETE CASCADE, name TEXT);
        """

    static func game(_ key: String, _ title: CloudValue, at milliseconds: Int64 = 5) -> CloudRecord {
        let version = HybridTimestamp(milliseconds: milliseconds, counter: 0, node: "there")
        return CloudRecord(
            id: CloudRecordID(name: "\(key):games", zone: zone), type: "games", fields: ["title": title, "score": .integer(1)],
            fieldVersions: ["title": version, "score": version], changeTag: "t\(key)\(milliseconds)")
    }

    /// The record `text` holds, read as a client reads a page's record (keeping its text).
    static func pageRecord(_ text: String) throws -> CloudRecord {
        var reader = JSONReader(text)
        let record = try CloudRecord(readingKeepingText: &reader)
        try reader.end()
        return record
    }

    static func player(_ key: String, of game: String) -> CloudRecord {
        let version = HybridTimestamp(milliseconds: 5, counter: 0, node: "there")
        return CloudRecord(
            id: CloudRecordID(name: "\(key):players", zone: zone), type: "players",
            fields: ["gameID": .text(game), "name": .text(key)], fieldVersions: ["gameID": version, "name": version],
            parent: CloudRecordID(name: "\(game):games", zone: zone), changeTag: "t\(key)")
    }

    /// The records of a page that break a constraint are quarantined wherever they are in the
    /// page, and the others all apply: a failed statement undoes itself (SQLite's ABORT).
    @Test(arguments: [0, 1, 2])
    func aConstraintBrokenAnywhereInThePageQuarantinesOnlyThatRecord(position: Int) async throws {
        let (queue, incoming) = try await Self.database(Self.schema)
        var records = [Self.game("g1", .text("one")), Self.game("g2", .text("two"))]
        records.insert(Self.game("bad", .null), at: position)
        let page = records
        let report = try await queue.write { db in try incoming.apply(records: page, tombstones: [], in: db) }
        #expect(report.quarantined == ["bad:games"])
        #expect(Set(report.saved) == ["g1:games", "g2:games"])
        let (rows, quarantined, metadata) = try await queue.read { db in
            (
                try String.fetchAll(db, sql: "SELECT id FROM games ORDER BY id"),
                try String.fetchAll(db, sql: "SELECT recordName FROM strata_sync.quarantined_records"),
                try String.fetchAll(db, sql: "SELECT recordPrimaryKey FROM strata_sync.metadata ORDER BY 1")
            )
        }
        #expect(rows == ["g1", "g2"])
        #expect(quarantined == ["bad:games"])
        #expect(metadata == ["g1", "g2"])
    }

    /// A user's trigger that writes and then fails (`RAISE(FAIL)` keeps what the statement
    /// wrote before it) and a constraint declared `ON CONFLICT FAIL`: the row's write keeps its
    /// savepoint, and nothing of the refused record stays.
    @Test(arguments: [
        """
        CREATE TABLE audit (what TEXT);
        CREATE TRIGGER audited BEFORE INSERT ON games BEGIN
            INSERT INTO audit VALUES (NEW.id);
            SELECT RAISE(FAIL, 'refused') WHERE NEW.title = 'refused';
        END;
        """,
        """
        CREATE TABLE audit (what TEXT);
        CREATE TRIGGER audited AFTER INSERT ON games BEGIN
            INSERT INTO audit VALUES (NEW.id);
            SELECT RAISE(FAIL, 'refused') WHERE NEW.title = 'refused';
        END;
        """,
    ])
    func whatAFailingUserTriggerWroteIsUndone(trigger: String) async throws {
        let (queue, incoming) = try await Self.database(Self.schema + trigger)
        let records = [Self.game("g1", .text("one")), Self.game("bad", .text("refused")), Self.game("g2", .text("two"))]
        let report = try await queue.write { db in try incoming.apply(records: records, tombstones: [], in: db) }
        #expect(report.quarantined == ["bad:games"])
        let audit = try await queue.read { db in try String.fetchAll(db, sql: "SELECT what FROM audit ORDER BY what") }
        #expect(audit == ["g1", "g2"])
    }

    @Test func aTableDeclaringOnConflictFailKeepsItsSavepoint() async throws {
        let failing = Self.schema.replacingOccurrences(of: "title TEXT NOT NULL,", with: "title TEXT NOT NULL ON CONFLICT FAIL,")
        let (queue, incoming) = try await Self.database(failing)
        let records = [Self.game("g1", .text("one")), Self.game("bad", .null), Self.game("g2", .text("two"))]
        let report = try await queue.write { db in
            let page = try ApplyingPage.begin(records, in: db)
            #expect(try page.needsSavepoint(#require(incoming.schema.table(named: "games")), in: db))
            #expect(try !page.needsSavepoint(#require(incoming.schema.table(named: "players")), in: db))
            return try incoming.apply(records: records, tombstones: [], in: db)
        }
        #expect(report.quarantined == ["bad:games"])
        #expect(try await queue.read { db in try String.fetchAll(db, sql: "SELECT id FROM games ORDER BY id") } == ["g1", "g2"])
    }

    /// The page's metadata is read before its first record: a record twice in one page (two
    /// versions) merges its second copy with what the first wrote, not with the state before.
    @Test func aRecordTwiceInOnePageMergesWithItsFirstCopy() async throws {
        let (queue, incoming) = try await Self.database(Self.schema)
        let newer = Self.game("g1", .text("newer"), at: 9)
        let older = Self.game("g1", .text("older"), at: 7)
        _ = try await queue.write { db in try incoming.apply(records: [newer, older], tombstones: [], in: db) }
        let title = try await queue.read { db in try String.fetchOne(db, sql: "SELECT title FROM games") }
        // The older copy loses every field to the newer one already applied; merged with the
        // metadata as it was before the page (no versions), it would have won.
        #expect(title == "newer")
    }

    /// Children whose parent comes earlier in the same page, or is already stored, or is
    /// nowhere: the row-exists memo answers as SQLite would.
    @Test func childrenFindParentsFromThePageAndFromBefore() async throws {
        let (queue, incoming) = try await Self.database(Self.schema)
        _ = try await queue.write { db in try incoming.apply(records: [Self.game("old", .text("before"))], tombstones: [], in: db) }
        let page = [
            Self.player("p1", of: "new"), Self.game("new", .text("in the page")), Self.player("p2", of: "old"),
            Self.player("p3", of: "new"), Self.player("p4", of: "missing"),
        ]
        let report = try await queue.write { db in try incoming.apply(records: page, tombstones: [], in: db) }
        #expect(report.waitingForParent == ["p4:players"])
        let players = try await queue.read { db in try String.fetchAll(db, sql: "SELECT id || '>' || gameID FROM players ORDER BY id") }
        #expect(players == ["p1>new", "p2>old", "p3>new"])
        // The waiting child applies once its parent arrives, and leaves the waiting table.
        _ = try await queue.write { db in try incoming.apply(records: [Self.game("missing", .text("late"))], tombstones: [], in: db) }
        let (applied, waiting) = try await queue.read { db in
            (
                try String.fetchAll(db, sql: "SELECT id FROM players WHERE gameID = 'missing'"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.unsynced_records")
            )
        }
        #expect(applied == ["p4"])
        #expect(waiting == 0)
    }

    /// A record kept aside by an earlier page, then arriving applicable: it leaves the
    /// waiting table although the new page began with nothing to forget of its own.
    @Test func aRecordWaitingFromAnEarlierPageIsForgottenWhenItApplies() async throws {
        let (queue, incoming) = try await Self.database(Self.schema)
        _ = try await queue.write { db in try incoming.apply(records: [Self.player("p1", of: "g1")], tombstones: [], in: db) }
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.unsynced_records") } == 1)
        _ = try await queue.write { db in
            try incoming.apply(records: [Self.game("g1", .text("one")), Self.player("p1", of: "g1")], tombstones: [], in: db)
        }
        let (waiting, players) = try await queue.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.unsynced_records"),
                try String.fetchAll(db, sql: "SELECT id FROM players")
            )
        }
        #expect(waiting == 0)
        #expect(players == ["p1"])
    }

    /// A record kept aside earlier in the same page (its first copy's parent is missing), whose
    /// second copy applies: the waiting copy goes, or the retry after the page would bring the
    /// stale copy back to wait forever.
    @Test func aRecordKeptAsideEarlierInThePageIsForgottenWhenItsNextCopyApplies() async throws {
        let (queue, incoming) = try await Self.database(Self.schema)
        _ = try await queue.write { db in try incoming.apply(records: [Self.game("g1", .text("one"))], tombstones: [], in: db) }
        var next = Self.player("p1", of: "g1")
        let later = HybridTimestamp(milliseconds: 9, counter: 0, node: "there")
        next.fieldVersions = ["gameID": later, "name": later]
        next.changeTag = "tp1-later"
        let page = [Self.player("p1", of: "missing"), next]
        let report = try await queue.write { db in try incoming.apply(records: page, tombstones: [], in: db) }
        #expect(report.waitingForParent == ["p1:players"])
        let (waiting, players) = try await queue.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.unsynced_records"),
                try String.fetchAll(db, sql: "SELECT id || '>' || gameID FROM players")
            )
        }
        #expect(waiting == 0)
        #expect(players == ["p1>g1"])
    }

    /// Only the records stored aside are looked for there: a page of records none of which
    /// waits, beside records of other names and zones that do, leaves those waiting.
    @Test func recordsWaitingUnderOtherNamesOrZonesStayWaiting() async throws {
        let (queue, incoming) = try await Self.database(Self.schema)
        var other = Self.player("p1", of: "missing")
        other.id = CloudRecordID(name: "p1:players", zone: CloudZoneID(name: "other", owner: "bob"))
        let elsewhere = other
        let composed = Self.player("\u{E9}", of: "missing")
        _ = try await queue.write { db in
            try incoming.apply(records: [elsewhere, composed, Self.player("p2", of: "missing")], tombstones: [], in: db)
        }
        let decomposed = Self.player("e\u{301}", of: "g1")
        _ = try await queue.write { db in
            try incoming.apply(records: [Self.game("g1", .text("one")), Self.player("p1", of: "g1"), decomposed], tombstones: [], in: db)
        }
        let waiting = try await queue.read { db in
            try String.fetchAll(db, sql: "SELECT ownerName || '/' || hex(recordName) FROM strata_sync.unsynced_records ORDER BY 1")
        }
        let expected = [
            "alice/" + Data("\u{E9}:players".utf8).map { String(format: "%02X", $0) }.joined(),
            "alice/" + Data("p2:players".utf8).map { String(format: "%02X", $0) }.joined(),
            "bob/" + Data("p1:players".utf8).map { String(format: "%02X", $0) }.joined(),
        ].sorted()
        #expect(waiting == expected)
    }

    /// The page's records that wait are found whether the waiting tables hold no more names
    /// than the page has records (all of them read) or more (the page's looked up by name),
    /// and applying the page forgets only those.
    @Test(arguments: [1, 2, 3, 6])
    func waitingRecordsAreFoundWithFewerOrMoreWaitingThanThePageHolds(othersWaiting: Int) async throws {
        let (queue, incoming) = try await Self.database(Self.schema)
        let others = (0..<othersWaiting).map { Self.player("other\($0)", of: "missing") }
        let waitingChild = Self.player("p1", of: "g1")
        _ = try await queue.write { db in try incoming.apply(records: others + [waitingChild], tombstones: [], in: db) }
        let page = [Self.game("g1", .text("one")), waitingChild, Self.game("g2", .text("two"))]
        let found = try await queue.read { db in try ApplyingPage.waiting(among: page, in: db) }
        #expect(found.contains(waitingChild.id))
        if othersWaiting + 1 > page.count { #expect(found == [waitingChild.id]) }
        _ = try await queue.write { db in try incoming.apply(records: page, tombstones: [], in: db) }
        let (waiting, players) = try await queue.read { db in
            (
                try String.fetchAll(db, sql: "SELECT recordName FROM strata_sync.unsynced_records ORDER BY 1"),
                try String.fetchAll(db, sql: "SELECT id FROM players")
            )
        }
        #expect(waiting == others.map(\.id.name).sorted())
        #expect(players == ["p1"])
    }

    /// Names that JSON must escape, and `:` inside keys: the one-statement read finds each
    /// stored row and nothing else.
    @Test func metadataOfManyNamesIsReadInOneStatement() async throws {
        let (queue, _) = try await Self.database(Self.schema)
        let keys = ["plain", "with:colon", "quote\"d", "back\\slash", "tab\there", "line\nbreak", "é", "🎲", ""]
        let found = try await queue.write { db in
            for key in keys {
                try RecordMetadata(name: RecordName(table: "games", primaryKey: key), zone: Self.zone).save(in: db)
            }
            let asked =
                keys.map { RecordName(table: "games", primaryKey: $0) } + [
                    RecordName(table: "games", primaryKey: "absent"), RecordName(table: "players", primaryKey: "plain"),
                ]
            return try RecordMetadata.fetchAll(asked, in: db)
        }
        #expect(Set(found.keys) == Set(keys.map { RecordName(table: "games", primaryKey: $0) }))
        #expect(found.values.allSatisfy { $0.zone == Self.zone })
    }

    /// The metadata JSON written before the transaction (``EncodedRecords``) is the JSON of the
    /// copy applied, and the versions text is used only when the merged versions are the
    /// record's own: with two copies of one record in a page, the older applied last loses
    /// its fields, and its versions must not be stored.
    @Test(arguments: [false, true])
    func metadataWrittenBeforehandDescribesWhatWasApplied(newerFirst: Bool) async throws {
        let (queue, plain) = try await Self.database(Self.schema)
        let newer = Self.game("g1", .text("newer"), at: 9)
        let older = Self.game("g1", .text("older"), at: 7)
        let page = newerFirst ? [newer, older, Self.game("g2", .text("two"))] : [older, newer, Self.game("g2", .text("two"))]
        var prepared = plain
        prepared.encoded = EncodedRecords(page)
        let incoming = prepared
        _ = try await queue.write { db in try incoming.apply(records: page, tombstones: [], in: db) }
        let rows = try await queue.read { db in
            try db.fetchAll(
                sql: "SELECT recordPrimaryKey, lastKnownServerRecord, fieldVersions, serverChangeTag FROM strata_sync.metadata ORDER BY 1"
            ) { row in (try row[0] as String, try row[1] as String, try row[2] as String, try row[3] as String?) }
        }
        #expect(rows.map(\.0) == ["g1", "g2"])
        let last = page[1]
        let stored = try SyncJSON.decode(CloudRecord.self, from: rows[0].1)
        #expect(stored == last)
        #expect(rows[0].3 == last.changeTag)
        // The newer copy's versions win, whichever came first.
        #expect(try SyncJSON.versions(rows[0].2) == newer.fieldVersions)
        #expect(try SyncJSON.decode(CloudRecord.self, from: rows[1].1) == page[2])
        let title = try await queue.read { db in try String.fetchOne(db, sql: "SELECT title FROM games WHERE id = 'g1'") }
        #expect(title == "newer")
    }

    /// A fetched record's metadata JSON is the text it arrived in (``ArrivedRecordText``),
    /// however the page spaced and ordered it, and reads back as the record; `json_extract`
    /// reads the stored versions. A record changed after it arrived is written anew, never
    /// stored as the stale text.
    @Test func aPagesOwnTextIsStoredAsTheRecordsJSONUnlessTheRecordChanged() async throws {
        let (queue, plain) = try await Self.database(Self.schema)
        let texts = [
            #"{"changeTag": "t1", "fieldVersions": {"score": "1700000000000.0@there", "title": "1700000000001.2@there"}, "fields": "#
                + #"{"score": {"integer": {"_0": 3}}, "title": {"text": {"_0": "Poker \u00e9 \"night\""}}}, "#
                + #""id": {"name": "g1:games", "zone": {"name": "strata.default", "owner": "alice"}}, "type": "games"}"#,
            #"{"type":"games","fields":{"title":{"text":{"_0":"two"}},"score":{"null":{}}},"parent":null,"#
                + #""id":{"zone":{"owner":"alice","name":"strata.default"},"name":"g2:games"},"#
                + #""fieldVersions":{"title":"5.0@there","score":"5.0@there"},"changeTag":"t2"}"#,
            #"{"changeTag":"t3","fieldVersions":{"score":"5.0@there","title":"5.0@there"},"#
                + #""fields":{"score":{"integer":{"_0":1}},"title":{"text":{"_0":"stale"}}},"#
                + #""id":{"name":"g3:games","zone":{"name":"strata.default","owner":"alice"}},"type":"games"}"#,
        ]
        var page = try texts.map(Self.pageRecord)
        page[2].fields["title"] = .text("changed")
        #expect(page.map { $0.arrivedText != nil } == [true, true, false])
        var prepared = plain
        prepared.encoded = EncodedRecords(page)
        let incoming = prepared
        let records = page
        _ = try await queue.write { db in try incoming.apply(records: records, tombstones: [], in: db) }
        let rows = try await queue.read { db in
            try db.fetchAll(
                sql: """
                    SELECT lastKnownServerRecord, fieldVersions, json_extract(fieldVersions, '$.title')
                    FROM strata_sync.metadata ORDER BY recordPrimaryKey
                    """
            ) { row in (try row[0] as String, try row[1] as String, try row[2] as String) }
        }
        #expect(rows.count == 3)
        #expect(rows[0].0 == texts[0] && rows[1].0 == texts[1])
        #expect(rows[2].0 != texts[2])
        for (row, record) in zip(rows, page) {
            #expect(try SyncJSON.decode(CloudRecord.self, from: row.0) == record)
            #expect(try SyncJSON.versions(row.1) == record.fieldVersions)
            #expect(row.2 == record.fieldVersions["title"]?.description)
        }
        let titles = try await queue.read { db in try String.fetchAll(db, sql: "SELECT title FROM games ORDER BY id") }
        #expect(titles == ["Poker é \"night\"", "two", "changed"])
    }

    /// A send's accepted saves store the JSON their batch task wrote: each row's last known
    /// server record carries the row's values and the change tag the metadata names.
    @Test func acceptedSavesStoreTheRecordTheCloudHas() async throws {
        let cloud = MockCloud()
        let device = try await SyncTestDevice("a", cloud: cloud)
        try await device.execute(
            (1...30).map { "INSERT INTO games (id, title, score) VALUES ('g\($0)', 'game \($0)', \($0));" }.joined())
        try await device.engine.sendChanges()
        let rows = try await device.database.read { db in
            try db.fetchAll(
                sql: """
                    SELECT m.lastKnownServerRecord, m.serverChangeTag, g.title, g.score
                    FROM strata_sync.metadata AS m JOIN games AS g ON g.id = m.recordPrimaryKey WHERE m.recordType = 'games'
                    """
            ) { row in (try row[0] as String, try row[1] as String, try row[2] as String, try row[3] as Int64) }
        }
        #expect(rows.count == 30)
        for (json, tag, title, score) in rows {
            let record = try SyncJSON.decode(CloudRecord.self, from: json)
            #expect(record.changeTag == tag)
            #expect(record.fields["title"] == .text(title))
            #expect(record.fields["score"] == .integer(score))
        }
    }
}
