import Foundation
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Synchronization
import Testing

/// A parent goes before or with its children whatever the order of edits, and a send that
/// makes no progress says so (issue #24, item 5).
@Suite(.timeLimit(.minutes(2))) struct SendProgressTests {
    static let schema = """
        CREATE TABLE folders (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL DEFAULT '');
        CREATE TABLE notes (
            id TEXT PRIMARY KEY NOT NULL,
            folderID TEXT REFERENCES folders(id) ON DELETE CASCADE,
            body TEXT
        );
        """

    func device(
        _ id: String, cloud: MockCloud, batchSize: Int = 400, container: (any CloudContainer)? = nil
    ) async throws -> (DatabaseQueue, SyncEngine) {
        let device = try await SyncTestDevice(
            id, container: container ?? cloud.container(user: "alice"), time: nil, schema: Self.schema,
            tables: ["folders", "notes"], batchSize: batchSize)
        return (device.database, device.engine)
    }

    /// Offline: a folder and its notes inserted in one transaction, then the folder renamed
    /// (its last change now sorts after every note). One send sends everything.
    @Test(arguments: [
        (notes: 399, batchSize: 400), (notes: 400, batchSize: 400), (notes: 401, batchSize: 400),
        (notes: 799, batchSize: 400), (notes: 800, batchSize: 400), (notes: 5, batchSize: 1),
        (notes: 5, batchSize: 2), (notes: 3, batchSize: 3), (notes: 3, batchSize: 4),
    ])
    func aParentRenamedAfterItsNewChildrenGoesWithThem(notes: Int, batchSize: Int) async throws {
        let cloud = MockCloud()
        let (database, engine) = try await device("a", cloud: cloud, batchSize: batchSize)
        try await database.write { db in
            try db.execute(sql: "INSERT INTO folders (id, name) VALUES ('f', 'Inbox')")
            for index in 0..<notes {
                try db.execute(sql: "INSERT INTO notes (id, folderID, body) VALUES (?, 'f', ?)", arguments: ["n\(index)", "note \(index)"])
            }
        }
        try await database.write { db in try db.execute(sql: "UPDATE folders SET name = 'Archive' WHERE id = 'f'") }
        try await engine.prepareEncryption()
        let keyRecords = cloud.modifyRequestSizes.reduce(0, +)
        try await engine.sendChanges()
        #expect(try await engine.pendingCount() == 0)
        let records = cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice"))
        #expect(records.count == notes + 1)
        let folder = try #require(records.first { $0.id.name == "f:folders" })
        #expect(try await engine.openCloudRecord(folder).fields["name"] == .text("Archive"))
        // Each record goes once: no request was spent on refusals.
        let sent = cloud.modifyRequestSizes.reduce(0, +) - keyRecords
        #expect(sent == notes + 1, "\(cloud.modifyRequestSizes)")
    }

    /// Children edited, then a grandparent chain renamed in the opposite order.
    @Test func editsAfterInsertsInAnyOrderConverge() async throws {
        let cloud = MockCloud()
        let (database, engine) = try await device("a", cloud: cloud, batchSize: 2)
        let (other, otherEngine) = try await device("b", cloud: cloud)
        try await database.write { db in
            for folder in 0..<3 {
                try db.execute(sql: "INSERT INTO folders (id) VALUES (?)", arguments: ["f\(folder)"])
                for note in 0..<3 {
                    try db.execute(sql: "INSERT INTO notes (id, folderID) VALUES (?, ?)", arguments: ["n\(folder)-\(note)", "f\(folder)"])
                }
            }
        }
        for folder in [2, 0, 1] {
            try await database.write { db in
                try db.execute(sql: "UPDATE notes SET body = 'edited' WHERE folderID = ?", arguments: ["f\(folder)"])
                try db.execute(sql: "UPDATE folders SET name = 'renamed' WHERE id = ?", arguments: ["f\(folder)"])
            }
        }
        try await engine.sendChanges()
        #expect(try await engine.pendingCount() == 0)
        try await otherEngine.syncChanges()
        let rows = try await other.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM notes WHERE body = 'edited'") }
        #expect(rows == 9)
    }

    /// A cloud that refuses everything with an answer that changes nothing: the send throws
    /// a typed error naming the records, sets `lastError`, and keeps them pending.
    @Test func aSendThatMakesNoProgressThrows() async throws {
        let cloud = MockCloud()
        let requests = Counter()
        let container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, _ in
            requests.increment()
            var result = CloudModifyResult()
            for record in saving { result.saveResults[record.id] = .failure(.batchRequestFailed(record.id)) }
            for id in deleting { result.deleteResults[id] = .failure(.batchRequestFailed(id)) }
            return result
        }
        let (database, engine) = try await device("a", cloud: cloud, container: container)
        try await database.write { db in try db.execute(sql: "INSERT INTO folders (id) VALUES ('f')") }
        await #expect {
            try await engine.sendChanges()
        } throws: { error in
            guard case SyncEngineError.sendStalled(let pending, let records, _) = error else { return false }
            return pending == 1 && records == ["f:folders"]
        }
        #expect(requests.value < 5)
        #expect(engine.status.lastError != nil)
        #expect(try await engine.pendingCount() == 1)
    }

    /// A child whose parent the cloud refuses for good: the send fails naming the parent, it
    /// does not spin.
    @Test func aChildWhoseParentFailsForGoodDoesNotSpin() async throws {
        let cloud = MockCloud()
        let requests = Counter()
        let container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            requests.increment()
            guard saving.contains(where: { $0.id.name == "f:folders" }) else {
                return try await next.modifyRecords(saving: saving, deleting: deleting)
            }
            var result = CloudModifyResult()
            for record in saving {
                result.saveResults[record.id] = .failure(
                    record.id.name == "f:folders" ? .permissionFailure(record.id) : .batchRequestFailed(record.id))
            }
            return result
        }
        let (database, engine) = try await device("a", cloud: cloud, container: container)
        try await database.write { db in
            try db.execute(sql: "INSERT INTO folders (id) VALUES ('f')")
            try db.execute(sql: "INSERT INTO notes (id, folderID) VALUES ('n', 'f')")
        }
        try await database.write { db in try db.execute(sql: "UPDATE folders SET name = 'x'") }
        await #expect(throws: SyncEngineError.self) { try await engine.sendChanges() }
        #expect(requests.value < 10, "\(requests.value) modify requests")
        #expect(try await engine.pendingCount() == 2)
    }
}

/// A thread-safe counter for closures that run in the cloud's tasks.
final class Counter: Sendable {
    private let storage = Mutex(0)
    func increment() { storage.withLock { $0 += 1 } }
    var value: Int { storage.withLock { $0 } }
}
