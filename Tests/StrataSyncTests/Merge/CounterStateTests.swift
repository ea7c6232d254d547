import Foundation
import StrataCloud
import StrataSQLite
import StrataSyncTestSupport
import Testing

@testable import StrataSync

/// A counter's state alone: lanes, their merge, and the plain value they agree with.
@Suite(.timeLimit(.minutes(1)))
struct CounterStateTests {
    static func at(_ milliseconds: Int64, _ node: String = "n") -> HybridTimestamp {
        HybridTimestamp(milliseconds: milliseconds, counter: 0, node: node)
    }
    static func lane(_ value: Int64, _ milliseconds: Int64, _ node: String = "n") -> CounterState.Lane {
        CounterState.Lane(value: value, version: at(milliseconds, node))
    }

    @Test func theTotalIsTheSumOfTheLanes() throws {
        let state = CounterState(base: Self.lane(10, 1), devices: ["a": Self.lane(3, 2, "a"), "b": Self.lane(-5, 3, "b")])
        #expect(try state.total() == 8)
        #expect(try CounterState().total() == 0)
    }

    @Test func aSumThatFitsNeverFailsWhateverTheOrderOfItsLanes() throws {
        // Int64.max + 1 - 1 in any order: a 64-bit partial sum would overflow in some orders.
        let state = CounterState(
            base: Self.lane(.max, 1), devices: ["a": Self.lane(1, 1, "a"), "b": Self.lane(-1, 1, "b"), "c": Self.lane(-1, 1, "c")])
        #expect(try state.total() == .max - 1)
        let over = CounterState(base: Self.lane(.max, 1), devices: ["a": Self.lane(1, 1, "a")])
        #expect(throws: CounterState.Overflow.self) { try over.total() }
        let under = CounterState(base: Self.lane(.min, 1), devices: ["a": Self.lane(-1, 1, "a")])
        #expect(throws: CounterState.Overflow.self) { try under.total() }
    }

    @Test func eachLaneKeepsItsNewerCopy() {
        let older = CounterState(base: Self.lane(1, 1), devices: ["a": Self.lane(5, 10, "a"), "b": Self.lane(2, 4, "b")])
        let newer = CounterState(base: Self.lane(7, 2), devices: ["a": Self.lane(3, 11, "a"), "c": Self.lane(1, 1, "c")])
        let merged = older.merged(with: newer)
        // The newer copy of a lane wins even when it went down (a decrement).
        #expect(
            merged
                == CounterState(
                    base: Self.lane(7, 2), devices: ["a": Self.lane(3, 11, "a"), "b": Self.lane(2, 4, "b"), "c": Self.lane(1, 1, "c")]))
    }

    @Test func mergeIsCommutativeAssociativeAndIdempotent() {
        var random = SeededGenerator(state: 7)
        func randomState() -> CounterState {
            var state = CounterState()
            if Bool.random(using: &random) {
                state.base = Self.lane(Int64.random(in: -9...9, using: &random), Int64.random(in: 0...3, using: &random))
            }
            for device in ["a", "b", "c"] where Bool.random(using: &random) {
                // Versions of one lane collide on purpose: a tie must still pick one copy.
                state.devices[device] = Self.lane(
                    Int64.random(in: -9...9, using: &random), Int64.random(in: 0...3, using: &random), device)
            }
            return state
        }
        for _ in 0..<500 {
            let (x, y, z) = (randomState(), randomState(), randomState())
            #expect(x.merged(with: y) == y.merged(with: x))
            #expect(x.merged(with: y).merged(with: z) == x.merged(with: y.merged(with: z)))
            #expect(x.merged(with: x) == x)
        }
    }

    @Test func aLocalEditGoesToThisDevicesLane() throws {
        let state = CounterState(base: Self.lane(10, 1), devices: ["a": Self.lane(2, 2, "a"), "b": Self.lane(3, 3, "b")])
        // 15 → 16: +1 for a.
        let after = try state.folding(value: 16, device: "a") { Self.at(9, "a") }
        #expect(after.devices["a"] == Self.lane(3, 9, "a"))
        #expect(after.devices["b"] == state.devices["b"])
        #expect(try after.total() == 16)
        // A device with no lane yet gets one; going down is a negative lane.
        let c = try state.folding(value: 12, device: "c") { Self.at(9, "c") }
        #expect(c.devices["c"] == Self.lane(-3, 9, "c"))
        // Nothing to explain: unchanged, and no version is taken from the clock.
        let same = try state.folding(value: 15, device: "a") {
            Issue.record("no new version was needed")
            return Self.at(0)
        }
        #expect(same == state)
    }

    @Test func aLocalEditBeyondInt64Throws() throws {
        let state = CounterState(devices: ["b": Self.lane(-10, 1, "b")])
        #expect(throws: CounterState.Overflow.self) { try state.folding(value: .max, device: "a") { Self.at(2, "a") } }
        // The device's own lane may hold what the others take away.
        let own = CounterState(devices: ["a": Self.lane(-1, 1, "a")])
        #expect(try own.folding(value: .max, device: "a") { Self.at(2, "a") }.total() == .max)
    }

    @Test func aRecordFromAWriterThatDoesNotKnowTheCounterBecomesTheBase() throws {
        let carried = CounterState(base: Self.lane(10, 1), devices: ["a": Self.lane(2, 2, "a")])
        // Agreeing: nothing changes.
        #expect(try CounterState.described(carried: carried, plainValue: 12, plainVersion: Self.at(3)) == carried)
        // An older app added 1 (12 → 13) and carried the state it received untouched.
        let once = try CounterState.described(carried: carried, plainValue: 13, plainVersion: Self.at(5, "old"))
        #expect(once.base == Self.lane(11, 5, "old"))
        #expect(try once.total() == 13)
        // Then again (13 → 14), still carrying the first state: the base is set, not added to.
        let twice = try CounterState.described(carried: carried, plainValue: 14, plainVersion: Self.at(6, "old"))
        #expect(try once.merged(with: twice).total() == 14)
        // No state at all (a record only older apps wrote): the whole value is the base.
        #expect(try CounterState.described(carried: nil, plainValue: 7, plainVersion: Self.at(4)) == CounterState(base: Self.lane(7, 4)))
        #expect(throws: CounterState.Overflow.self) {
            try CounterState.described(carried: CounterState(devices: ["a": Self.lane(-1, 1, "a")]), plainValue: .max, plainVersion: nil)
        }
    }

    @Test func theStateRoundTripsThroughItsField() throws {
        let state = CounterState(base: Self.lane(10, 1, "seed"), devices: ["a": Self.lane(-2, 2, "a"), "b:c@d": Self.lane(3, 3, "b:c@d")])
        #expect(try CounterMerge.decode(CounterMerge.encode(state)) == state)
        // The hand-written form is the Codable one, both ways.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for value in [state, CounterState(), CounterState(devices: ["é\"\\": Self.lane(.min, -3, "x")])] {
            let slow = String(decoding: try encoder.encode(value), as: UTF8.self)
            #expect(try FastJSON.text(of: value) == slow)
            #expect(try FastJSON.read(CounterState.self, from: slow) == value)
            #expect(try JSONDecoder().decode(CounterState.self, from: Data(FastJSON.text(of: value).utf8)) == value)
        }
        #expect(try CounterMerge.decode(nil) == nil)
        #expect(try CounterMerge.decode(.null) == nil)
        #expect(throws: CounterMerge.Failure.self) { try CounterMerge.decode(.text("{\"devices\": 3}")) }
        #expect(throws: CounterMerge.Failure.self) { try CounterMerge.decode(.integer(3)) }
        #expect(CounterState.created(value: 4, version: .oldest).base?.version == .oldest)
        #expect(HybridTimestamp(HybridTimestamp.oldest.description) == .oldest)
    }
}
