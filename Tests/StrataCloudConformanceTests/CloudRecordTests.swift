import Foundation
import StrataSync
import Testing

/// The mock cloud keeps the service's rules for saving and deleting records.
@Suite(.timeLimit(.minutes(5))) struct CloudRecordTests {
    var cloud: TestCloud { TestCloud.current }
    let zone = CloudZoneID(name: "zone", owner: "alice")
    var database: any CloudDatabase { cloud.container(user: "alice").privateDatabase }

    func record(_ name: String, title: String = "t", parent: String? = nil, tag: String? = nil) -> CloudRecord {
        CloudRecord(
            id: CloudRecordID(name: name, zone: zone), type: "games", fields: ["title": .text(title)],
            parent: parent.map { CloudRecordID(name: $0, zone: zone) }, changeTag: tag)
    }

    func save(_ records: CloudRecord..., deleting: [String] = []) async throws -> CloudModifyResult {
        try await database.modifyRecords(saving: records, deleting: deleting.map { CloudRecordID(name: $0, zone: zone) })
    }

    func saved(_ result: CloudModifyResult, _ name: String) throws -> CloudRecord {
        try #require(result.saveResults[CloudRecordID(name: name, zone: zone)]).get()
    }

    func failure(_ result: CloudModifyResult, _ name: String) -> CloudError? {
        let id = CloudRecordID(name: name, zone: zone)
        if case .failure(let error)? = result.saveResults[id] { return error }
        if case .failure(let error)? = result.deleteResults[id] { return error }
        return nil
    }

    @Test(arguments: CloudKind.available) func everySaveGetsANewChangeTag(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let first = try saved(try await save(record("r")), "r")
            let second = try saved(try await save(record("r", title: "u", tag: first.changeTag)), "r")
            #expect(first.changeTag != nil && second.changeTag != nil && first.changeTag != second.changeTag)
            #expect(try await cloud.records(in: zone).first?.fields["title"] == .text("u"))
        }
    }

    @Test(arguments: CloudKind.available) func aStaleTagFailsWithTheServersCopy(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let first = try saved(try await save(record("r")), "r")
            let second = try saved(try await save(record("r", title: "server", tag: first.changeTag)), "r")
            let result = try await save(record("r", title: "stale", tag: first.changeTag))
            #expect(failure(result, "r") == .serverRecordChanged(second))
            #expect(try await cloud.records(in: zone).first?.fields["title"] == .text("server"))
        }
    }

    @Test(arguments: CloudKind.available) func aNewRecordOverAnExistingNameFails(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let first = try saved(try await save(record("r")), "r")
            #expect(failure(try await save(record("r", title: "again")), "r") == .serverRecordChanged(first))
        }
    }

    @Test(arguments: CloudKind.available) func aTagForAMissingRecordIsUnknown(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let id = CloudRecordID(name: "r", zone: zone)
            #expect(failure(try await save(record("r", tag: "tag-9")), "r") == .unknownItem(id))
        }
    }

    @Test(arguments: CloudKind.available) func aMissingZoneFailsEveryOperationInIt(_ kind: CloudKind) async throws {
        try await kind.run {
            let result = try await save(record("r"), deleting: ["s"])
            #expect(failure(result, "r") == .zoneNotFound(zone))
            #expect(failure(result, "s") == .zoneNotFound(zone))
        }
    }

    @Test(arguments: CloudKind.available) func aChildNeedsItsParent(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            #expect(
                failure(try await save(record("child", parent: "parent")), "child")
                    == .referenceViolation(CloudRecordID(name: "child", zone: zone)))
            let together = try await save(record("parent"), record("child", parent: "parent"))
            #expect(failure(together, "child") == nil)
        }
    }

    @Test(arguments: CloudKind.available) func aParentWithChildrenCannotBeDeletedAlone(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            _ = try await save(record("parent"), record("child", parent: "parent"))
            let alone = try await save(deleting: ["parent"])
            #expect(failure(alone, "parent") == .referenceViolation(CloudRecordID(name: "parent", zone: zone)))
            let both = try await save(deleting: ["child", "parent"])
            #expect(failure(both, "parent") == nil && failure(both, "child") == nil)
            #expect(try await cloud.records(in: zone).isEmpty)
        }
    }

    @Test(arguments: CloudKind.available) func savingAChildChangesItsParentsTag(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let parent = try saved(try await save(record("parent")), "parent")
            _ = try await save(record("child", parent: "parent"))
            let stored = try #require(try await cloud.records(in: zone).first { $0.id.name == "parent" })
            #expect(stored.changeTag != parent.changeTag)
        }
    }

    @Test(arguments: CloudKind.available) func oneFailureFailsItsWholeZoneAndNoOther(_ kind: CloudKind) async throws {
        try await kind.run {
            let other = CloudZoneID(name: "other", owner: "alice")
            try await database.saveZones([zone, other])
            _ = try await save(record("taken"))
            var elsewhere = record("fine")
            elsewhere.id.zone = other
            let result = try await save(record("new"), record("taken", title: "clash"), elsewhere)
            #expect(failure(result, "new") == .batchRequestFailed(CloudRecordID(name: "new", zone: zone)))
            #expect(try await cloud.records(in: zone).map(\.id.name) == ["taken"])
            #expect(try await cloud.records(in: other).map(\.id.name) == ["fine"])
        }
    }

    @Test(arguments: CloudKind.available) func requestsOverTheLimitsChangeNothing(_ kind: CloudKind) async throws {
        try await kind.run(limits: CloudLimits(maximumItemsPerRequest: 2, maximumBytesPerRequest: 100)) {
            try await database.saveZones([zone])
            await #expect(throws: CloudError.limitExceeded) {
                _ = try await database.modifyRecords(saving: [record("a"), record("b"), record("c")], deleting: [])
            }
            await #expect(throws: CloudError.limitExceeded) {
                _ = try await database.modifyRecords(saving: [record("a", title: String(repeating: "x", count: 200))], deleting: [])
            }
            #expect(try await cloud.records(in: zone).isEmpty)
        }
    }

    @Test(arguments: CloudKind.available) func aRequestPastTheUsersQuotaFailsWholeAndDeletesFreeSpace(_ kind: CloudKind) async throws {
        try await kind.run(limits: CloudLimits(maximumBytesPerUser: 100)) {
            try await database.saveZones([zone])
            let big = String(repeating: "x", count: 50)
            _ = try saved(try await save(record("a", title: big)), "a")
            await #expect(throws: CloudError.quotaExceeded) {
                _ = try await database.modifyRecords(saving: [record("b", title: big), record("c")], deleting: [])
            }
            #expect(try await cloud.records(in: zone).map(\.id.name) == ["a"])
            // Deleting always passes, and frees room for what did not fit.
            let freed = try await save(record("b", title: big), deleting: ["a"])
            #expect(failure(freed, "a") == nil && failure(freed, "b") == nil)
            #expect(try await cloud.records(in: zone).map(\.id.name) == ["b"])
        }
    }

    @Test(arguments: CloudKind.available) func deletingAMissingRecordSucceeds(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            #expect(failure(try await save(deleting: ["ghost"]), "ghost") == nil)
        }
    }

    @Test(arguments: CloudKind.available) func storedRecordsAreCopies(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            var sent = record("r")
            let result = try await save(sent)
            sent.fields["title"] = .text("changed by the caller")
            var received = try saved(result, "r")
            received.fields["title"] = .text("changed too")
            #expect(try await cloud.records(in: zone).first?.fields["title"] == .text("t"))
        }
    }

    @Test(arguments: CloudKind.available) func fetchingRecordsReportsEachOne(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            _ = try await save(record("r"))
            let missing = CloudRecordID(name: "missing", zone: zone)
            let results = try await database.fetchRecords([CloudRecordID(name: "r", zone: zone), missing])
            #expect(try results[CloudRecordID(name: "r", zone: zone)]?.get().fields["title"] == .text("t"))
            guard case .failure(let error)? = results[missing] else { Issue.record("missing record found"); return }
            #expect(error == .unknownItem(missing))
        }
    }

    @Test(arguments: CloudKind.available) func ofConcurrentSavesWithOneTagExactlyOneWins(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let first = try saved(try await save(record("r")), "r")
            let cloud = self.cloud
            let zone = self.zone
            let winners = await withTaskGroup(of: Bool.self) { group in
                for device in 0..<8 {
                    group.addTask {
                        let update = CloudRecord(
                            id: CloudRecordID(name: "r", zone: zone), type: "games", fields: ["title": .text("device \(device)")],
                            changeTag: first.changeTag)
                        let result = try? await cloud.container(user: "alice").privateDatabase.modifyRecords(saving: [update], deleting: [])
                        if case .success? = result?.saveResults[update.id] { return true }
                        return false
                    }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(winners == 1)
        }
    }
}
