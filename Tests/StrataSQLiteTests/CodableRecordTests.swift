import Foundation
import StrataSQLite
import Testing

@Suite(.timeLimit(.minutes(5))) struct CodableRecordTests {
    struct Metadata: Codable, Equatable {
        var pages: Int
        var tags: [String]
    }

    enum Genre: String, Codable, DatabaseValueConvertible {
        case fiction, essay
    }

    struct Book: TableRecord, Codable, Equatable {
        static let tableName = "books"
        static let columnNames = ["id", "title", "genre", "publishedAt", "isbn", "rating", "isAvailable", "metadata", "cover"]
        var id: Int64
        var title: String
        var genre: Genre
        var publishedAt: Date
        var isbn: UUID?
        var rating: Double?
        var isAvailable: Bool
        var metadata: Metadata
        var cover: Data?
    }

    func makeQueue() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE books (
                        id INTEGER PRIMARY KEY,
                        title TEXT NOT NULL,
                        genre TEXT NOT NULL,
                        publishedAt TEXT NOT NULL,
                        isbn TEXT,
                        rating REAL,
                        isAvailable INTEGER NOT NULL,
                        metadata TEXT NOT NULL,
                        cover BLOB
                    )
                    """)
        }
        return queue
    }

    let book = Book(
        id: 1, title: "Dune", genre: .fiction,
        publishedAt: Date(timeIntervalSince1970: 1_000_000_000.25),
        isbn: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
        rating: 4.5, isAvailable: true,
        metadata: Metadata(pages: 412, tags: ["sand", "spice"]),
        cover: Data([1, 2, 3]))

    @Test func encodesColumnsAndDecodesByName() throws {
        let queue = try makeQueue()
        try queue.write { db in
            try book.insert(db)
            #expect(try Book.find(db, id: 1) == book)
            #expect(try Book.fetchAll(db) == [book])
            // Stored values use each type's database representation.
            let stored = try db.fetchOne(sql: "SELECT genre, publishedAt, isbn, isAvailable, typeof(cover) FROM books") { row in
                [try row[0] as String, try row[1] as String, try row[2] as String, String(try row[3] as Int), try row[4] as String]
            }
            #expect(stored == ["fiction", "2001-09-09 01:46:40.250", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f", "1", "blob"])
        }
    }

    @Test func nestedCodablePropertyIsStoredAsJSONText() throws {
        let queue = try makeQueue()
        try queue.write { db in
            try book.insert(db)
            #expect(try String.fetchOne(db, sql: "SELECT metadata FROM books") == #"{"pages":412,"tags":["sand","spice"]}"#)
            #expect(try String.fetchOne(db, sql: "SELECT typeof(metadata) FROM books") == "text")
            #expect(try Int.fetchOne(db, sql: "SELECT metadata ->> '$.pages' FROM books") == 412)
            // JSON written by SQL decodes too.
            try db.execute(sql: "UPDATE books SET metadata = json_object('tags', json_array('x'), 'pages', 1)")
            #expect(try Book.find(db, id: 1).metadata == Metadata(pages: 1, tags: ["x"]))
        }
    }

    @Test func nilOptionalsAreStoredAsNull() throws {
        let queue = try makeQueue()
        var bare = book
        bare.isbn = nil
        bare.rating = nil
        bare.cover = nil
        try queue.write { db in
            try bare.insert(db)
            #expect(
                try db.fetchOne(sql: "SELECT isbn IS NULL AND rating IS NULL AND cover IS NULL FROM books") { try $0[0] as Bool } == true)
            #expect(try Book.find(db, id: 1) == bare)
        }
    }

    @Test func decodesByColumnNameWhateverTheOrder() throws {
        let queue = try makeQueue()
        try queue.write { db in
            try book.insert(db)
            let reordered = try Book.fetchOne(
                db, sql: "SELECT cover, metadata, isAvailable, rating, isbn, publishedAt, genre, title, id FROM books")
            #expect(reordered == book)
        }
    }

    @Test func updateUpsertAndDeleteWithCodableRecords() throws {
        let queue = try makeQueue()
        try queue.write { db in
            var record = book
            try record.insert(db)
            record.title = "Dune Messiah"
            record.metadata.pages = 256
            try record.update(db)
            #expect(try Book.find(db, id: 1) == record)
            record.id = 2
            try record.upsert(db)
            #expect(try Book.fetchCount(db) == 2)
            #expect(try record.delete(db))
            #expect(try Book.fetchCount(db) == 1)
        }
    }

    @Test func missingColumnIsAKeyNotFoundError() throws {
        let queue = try makeQueue()
        try queue.write { db in
            try book.insert(db)
            #expect(throws: DecodingError.self) { try Book.fetchOne(db, sql: "SELECT id, title FROM books") }
        }
    }

    @Test func typeMismatchNamesTheColumn() throws {
        let queue = try makeQueue()
        try queue.write { db in
            try book.insert(db)
            try db.execute(sql: "UPDATE books SET isAvailable = 'maybe'")
            let error = #expect(throws: RowDecodingError.self) { try Book.fetchAll(db) }
            #expect(error?.columnName == "isAvailable")
            #expect(error?.columnIndex == 6)
            try db.execute(sql: "UPDATE books SET isAvailable = 1, metadata = 'not json'")
            let jsonError = #expect(throws: RowDecodingError.self) { try Book.fetchAll(db) }
            #expect(jsonError?.columnName == "metadata")
        }
    }

    /// A Decodable type that is only fetched, not a table record.
    @Test func fetchableDecodableFromAnyQuery() throws {
        struct Summary: FetchableRecord, Decodable, Equatable {
            var genre: String
            var count: Int
            var maxRating: Double?
        }
        let queue = try makeQueue()
        try queue.write { db in
            try book.insert(db)
            var other = book
            other.id = 2
            other.rating = nil
            try other.insert(db)
            let summaries = try Summary.fetchAll(
                db, sql: "SELECT genre, COUNT(*) AS count, MAX(rating) AS maxRating FROM books GROUP BY genre")
            #expect(summaries == [Summary(genre: "fiction", count: 2, maxRating: 4.5)])
        }
    }
}
