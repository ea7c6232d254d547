import Testing

@testable import StrataSync

/// Applying a record's decisions alone: no database, no cloud.
@Suite(.timeLimit(.minutes(1)))
struct IncomingDecisionTests {
    static let zoneA = CloudZoneID(name: "a", owner: "alice")
    static let zoneB = CloudZoneID(name: "b", owner: "alice")
    static func at(_ milliseconds: Int64, _ node: String = "n") -> HybridTimestamp {
        HybridTimestamp(milliseconds: milliseconds, counter: 0, node: node)
    }

    @Test func aCopyFromTheOldZoneIsLeftBehindUnlessItsParentIsNewer() {
        func leftBehind(stored: CloudZoneID?, local: HybridTimestamp?, incoming: HybridTimestamp?) -> Bool {
            IncomingDecision.isLeftBehindCopy(
                storedZone: stored, incomingZone: Self.zoneA, localParentVersion: local, incomingParentVersion: incoming)
        }
        #expect(leftBehind(stored: Self.zoneB, local: Self.at(5), incoming: Self.at(4)))
        #expect(leftBehind(stored: Self.zoneB, local: Self.at(5), incoming: nil))
        #expect(!leftBehind(stored: Self.zoneB, local: Self.at(5), incoming: Self.at(5)))
        #expect(!leftBehind(stored: Self.zoneB, local: Self.at(5), incoming: Self.at(6)))
        // Same zone, no local version, or a record never seen: applied as usual.
        #expect(!leftBehind(stored: Self.zoneA, local: Self.at(5), incoming: Self.at(4)))
        #expect(!leftBehind(stored: Self.zoneB, local: nil, incoming: Self.at(4)))
        #expect(!leftBehind(stored: nil, local: Self.at(5), incoming: Self.at(4)))
    }

    @Test func aMissingParentWaitsUnlessItWasDeletedHere() {
        for onDelete in ["CASCADE", "SET NULL", "SET DEFAULT", "NO ACTION", "RESTRICT"] {
            #expect(
                IncomingDecision.missingParent(
                    parentDeletedLocally: false, onDelete: onDelete, localColumnVersion: Self.at(9), incomingColumnVersion: Self.at(1))
                    == .waitForParent)
        }
    }

    @Test func aParentDeletedHereDecidesByItsForeignKeyAndTheColumnsVersions() {
        func decide(_ onDelete: String, local: HybridTimestamp?, incoming: HybridTimestamp?) -> IncomingDecision.MissingParent {
            IncomingDecision.missingParent(
                parentDeletedLocally: true, onDelete: onDelete, localColumnVersion: local, incomingColumnVersion: incoming)
        }
        #expect(decide("CASCADE", local: Self.at(9), incoming: Self.at(1)) == .deleteWithParent)
        #expect(decide("SET NULL", local: nil, incoming: Self.at(1)) == .replaceParentColumn)
        #expect(decide("SET NULL", local: Self.at(1), incoming: Self.at(2)) == .replaceParentColumn)
        #expect(decide("SET NULL", local: Self.at(2), incoming: Self.at(2)) == .replaceParentColumn)
        #expect(decide("SET NULL", local: Self.at(2, "b"), incoming: Self.at(2, "a")) == .keepLocalParentColumn)
        #expect(decide("SET DEFAULT", local: Self.at(3), incoming: Self.at(2)) == .keepLocalParentColumn)
        #expect(decide("SET DEFAULT", local: Self.at(3), incoming: nil) == .keepLocalParentColumn)
    }

    @Test func aMergedRecordStaysPendingOnlyWhenThisDevicesValuesWon() {
        #expect(IncomingDecision.pendingAfterMerge(localWins: false, forcedLocally: false, pending: .save, revision: 4) == (nil, 4))
        #expect(IncomingDecision.pendingAfterMerge(localWins: true, forcedLocally: false, pending: nil, revision: 4) == (.save, 5))
        #expect(IncomingDecision.pendingAfterMerge(localWins: true, forcedLocally: false, pending: .save, revision: 4) == (.save, 4))
        #expect(IncomingDecision.pendingAfterMerge(localWins: false, forcedLocally: true, pending: nil, revision: 0) == (.save, 1))
    }
}
