import StrataSQLite
import Testing

@testable import StrataSync

/// A counter column's decisions alone: local edits into this device's lane, incoming records
/// merged lane by lane. No database, no cloud.
@Suite(.timeLimit(.minutes(1)))
struct CounterMergeTests {
    static func at(_ milliseconds: Int64, _ node: String = "n") -> HybridTimestamp {
        HybridTimestamp(milliseconds: milliseconds, counter: 0, node: node)
    }
    static func lane(_ value: Int64, _ milliseconds: Int64, _ node: String = "n") -> CounterState.Lane {
        CounterState.Lane(value: value, version: at(milliseconds, node))
    }
    static func incoming(_ value: Int64?, _ state: CounterState?, at version: HybridTimestamp?) -> CounterMerge.Incoming {
        CounterMerge.Incoming(value: value.map { .integer($0) }, state: state.map(CounterMerge.encode), version: version)
    }

    /// A clock for one device: each call a millisecond later.
    final class Versions {
        var next: Int64
        let node: String
        init(from start: Int64, node: String) {
            next = start
            self.node = node
        }
        func issue() -> HybridTimestamp {
            next += 1
            return HybridTimestamp(milliseconds: next, counter: 0, node: node)
        }
    }

    @Test func aRowWithNoStateStartsWithItsValueAsTheBase() throws {
        let versions = Versions(from: 100, node: "a")
        let state = try CounterMerge.afterLocalEdit(
            known: nil, value: .integer(5), createdVersion: Self.at(50, "a"), device: "a", nextVersion: versions.issue)
        #expect(state == CounterState(base: Self.lane(5, 50, "a")))
        // Then +1 goes to the device's lane.
        let after = try CounterMerge.afterLocalEdit(
            known: state, value: .integer(6), createdVersion: Self.at(50, "a"), device: "a", nextVersion: versions.issue)
        #expect(after.devices["a"] == Self.lane(1, 101, "a"))
    }

    @Test func twoConcurrentIncrementsAddUpInEitherOrder() throws {
        let synced = CounterState(base: Self.lane(10, 1, "a"))
        let a = try CounterMerge.afterLocalEdit(known: synced, value: .integer(11), createdVersion: Self.at(1), device: "a") {
            Self.at(5, "a")
        }
        let b = try CounterMerge.afterLocalEdit(known: synced, value: .integer(11), createdVersion: Self.at(1), device: "b") {
            Self.at(6, "b")
        }
        // b receives a's record, then a receives b's merged one.
        let onB = try CounterMerge.apply(
            local: .integer(11), localVersion: Self.at(6, "b"), known: b, incoming: Self.incoming(11, a, at: Self.at(5, "a")), device: "b"
        ) { Self.at(7, "b") }
        #expect(onB.value == .integer(12))
        #expect(onB.localWins)
        let onA = try CounterMerge.apply(
            local: .integer(11), localVersion: Self.at(5, "a"), known: a, incoming: Self.incoming(12, onB.state, at: onB.version),
            device: "a"
        ) { Self.at(8, "a") }
        #expect(onA.value == .integer(12))
        #expect(!onA.localWins)
        #expect(onA.state == onB.state)
    }

    @Test func applyingTheSameRecordTwiceChangesNothing() throws {
        let mine = CounterState(base: Self.lane(10, 1), devices: ["a": Self.lane(2, 5, "a")])
        let theirs = CounterState(base: Self.lane(10, 1), devices: ["b": Self.lane(3, 6, "b")])
        let once = try CounterMerge.apply(
            local: .integer(12), localVersion: Self.at(5, "a"), known: mine, incoming: Self.incoming(13, theirs, at: Self.at(6, "b")),
            device: "a"
        ) { Self.at(9, "a") }
        let twice = try CounterMerge.apply(
            local: once.value?.databaseValue, localVersion: once.version, known: once.state,
            incoming: Self.incoming(13, theirs, at: Self.at(6, "b")), device: "a"
        ) { Self.at(10, "a") }
        #expect(once.value == .integer(15))
        #expect(twice == once)
    }

    @Test func withNoRowOrNoLocalVersionTheIncomingStateIsTaken() throws {
        let theirs = CounterState(base: Self.lane(4, 1), devices: ["b": Self.lane(3, 6, "b")])
        for (local, version) in [(nil, Self.at(9)), (DatabaseValue.integer(100), nil)] as [(DatabaseValue?, HybridTimestamp?)] {
            let outcome = try CounterMerge.apply(
                local: local, localVersion: version, known: CounterState(devices: ["a": Self.lane(50, 2, "a")]),
                incoming: Self.incoming(7, theirs, at: Self.at(6, "b")), device: "a"
            ) { Self.at(10, "a") }
            #expect(outcome == CounterMerge.Outcome(value: .integer(7), state: theirs, version: Self.at(6, "b"), localWins: false))
        }
    }

    @Test func aRecordWithoutTheColumnKeepsTheLocalValue() throws {
        let mine = CounterState(base: Self.lane(10, 1), devices: ["a": Self.lane(2, 5, "a")])
        let outcome = try CounterMerge.apply(
            local: .integer(12), localVersion: Self.at(5, "a"), known: mine, incoming: Self.incoming(nil, nil, at: nil), device: "a"
        ) { Self.at(10, "a") }
        #expect(outcome == CounterMerge.Outcome(value: nil, state: mine, version: Self.at(5, "a"), localWins: true))
    }

    @Test func anOlderAppsPlainEditMergesAsTheBase() throws {
        // The record only an older app wrote: 20, no state. This device added 3 to what it
        // knew (the older app's earlier 17).
        let known = try #require(try CounterMerge.knownState(stored: nil, lastKnown: Self.incoming(17, nil, at: Self.at(1, "old"))))
        let mine = try CounterMerge.afterLocalEdit(known: known, value: .integer(20), createdVersion: Self.at(1), device: "a") {
            Self.at(5, "a")
        }
        let outcome = try CounterMerge.apply(
            local: .integer(20), localVersion: Self.at(5, "a"), known: mine, incoming: Self.incoming(20, nil, at: Self.at(4, "old")),
            device: "a"
        ) { Self.at(6, "a") }
        // 17 + 3 (older app) + 3 (here).
        #expect(outcome.value == .integer(23))
        #expect(outcome.localWins)
    }

    @Test func aNullRecordWithATotalOfZeroStaysNull() throws {
        let state = CounterState(base: Self.lane(1, 1), devices: ["b": Self.lane(-1, 5, "b")])
        let outcome = try CounterMerge.apply(
            local: .integer(1), localVersion: Self.at(1), known: CounterState(base: Self.lane(1, 1)),
            incoming: CounterMerge.Incoming(value: .null, state: CounterMerge.encode(state), version: Self.at(5, "b")), device: "a"
        ) { Self.at(6, "a") }
        #expect(outcome.value == .null)
        // A NULL record whose lanes do not add up to 0: NULL counts as 0, the rest is the base.
        let other = try CounterMerge.apply(
            local: nil, localVersion: nil, known: nil,
            incoming: CounterMerge.Incoming(
                value: .null, state: CounterMerge.encode(CounterState(base: Self.lane(4, 1))), version: Self.at(5, "b")),
            device: "a"
        ) { Self.at(6, "a") }
        #expect(other.value == .null)
        #expect(try other.state?.total() == 0)
    }

    @Test func valuesThatAreNotIntegersOrOverflowFailTyped() throws {
        #expect(throws: CounterMerge.Failure.notAnInteger("the text \"x\"")) {
            try CounterMerge.afterLocalEdit(known: nil, value: .text("x"), createdVersion: Self.at(1), device: "a") { Self.at(2) }
        }
        #expect(throws: CounterMerge.Failure.notAnInteger("1.5")) { try CounterMerge.integer(DatabaseValue.real(1.5)) }
        #expect(try CounterMerge.integer(DatabaseValue.real(2)) == 2)
        #expect(try CounterMerge.integer(DatabaseValue.null) == 0)
        let near = CounterState(devices: ["a": Self.lane(.max - 1, 5, "a")])
        let plusTwo = CounterState(devices: ["b": Self.lane(2, 6, "b")])
        #expect(throws: CounterMerge.Failure.overflow) {
            try CounterMerge.apply(
                local: .integer(.max - 1), localVersion: Self.at(5, "a"), known: near,
                incoming: Self.incoming(2, plusTwo, at: Self.at(6, "b")),
                device: "a"
            ) { Self.at(7, "a") }
        }
        #expect(throws: CounterMerge.Failure.malformedState("an integer, not JSON text")) {
            try CounterMerge.apply(
                local: nil, localVersion: nil, known: nil,
                incoming: CounterMerge.Incoming(value: .integer(1), state: .integer(3), version: nil), device: "a"
            ) { Self.at(7, "a") }
        }
    }
}
