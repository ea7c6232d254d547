import StrataSQLite
import Testing

@testable import StrataSync

/// An app-defined column merge's decisions alone: when the app's function is called, and what
/// its result makes of the column.
@Suite(.timeLimit(.minutes(1)))
struct CustomMergeTests {
    static func at(_ milliseconds: Int64, _ node: String = "n") -> HybridTimestamp {
        HybridTimestamp(milliseconds: milliseconds, counter: 0, node: node)
    }
    static let maximum: @Sendable (MergeCandidate, MergeCandidate) -> DatabaseValue = { local, incoming in
        guard case .integer(let a) = local.value, case .integer(let b) = incoming.value else { return incoming.value }
        return .integer(max(a, b))
    }
    static func never(_: MergeCandidate, _: MergeCandidate) -> DatabaseValue {
        Issue.record("the merge function should not be called")
        return .null
    }

    @Test func differentValuesGoToTheFunctionAndTakeTheGreaterVersion() {
        let kept = CustomMerge.decide(
            local: .integer(9), localVersion: Self.at(5), incoming: .integer(3), incomingVersion: Self.at(8), merge: Self.maximum)
        // The local 9 beats the later 3: written here, and sent.
        #expect(kept == CustomMerge.Decision(value: .integer(9), version: Self.at(8), localWins: true))
        let taken = CustomMerge.decide(
            local: .integer(3), localVersion: Self.at(8), incoming: .integer(9), incomingVersion: Self.at(5), merge: Self.maximum)
        #expect(taken == CustomMerge.Decision(value: .integer(9), version: Self.at(8), localWins: false))
    }

    /// An incoming edit this device already knows (its own save coming back after it edited
    /// the row again, or a page applied twice) keeps the local value without the function.
    @Test func anIncomingEditAlreadyKnownKeepsTheLocalValueWithoutTheFunction() {
        let echo = CustomMerge.decide(
            local: .integer(1), localVersion: Self.at(8), incoming: .integer(9), incomingVersion: Self.at(5),
            knownVersion: Self.at(5), merge: Self.never)
        #expect(echo == CustomMerge.Decision(value: nil, version: Self.at(8), localWins: true))
        let older = CustomMerge.decide(
            local: .integer(1), localVersion: Self.at(8), incoming: .integer(9), incomingVersion: Self.at(4),
            knownVersion: Self.at(5), merge: Self.never)
        #expect(older == CustomMerge.Decision(value: nil, version: Self.at(8), localWins: true))
        let same = CustomMerge.decide(
            local: .integer(9), localVersion: Self.at(8), incoming: .integer(9), incomingVersion: Self.at(5),
            knownVersion: Self.at(5), merge: Self.never)
        #expect(same == CustomMerge.Decision(value: nil, version: Self.at(8), localWins: false))
    }

    /// An edit newer than the one known is news (another device's, made before or after the
    /// local edit): it goes to the function as before.
    @Test(arguments: [(5, 8, 6), (5, 8, 9), (3, 8, 4)] as [(Int64, Int64, Int64)])
    func anIncomingEditNotYetKnownStillGoesToTheFunction(known: Int64, local: Int64, incoming: Int64) {
        var called = false
        _ = CustomMerge.decide(
            local: .integer(1), localVersion: Self.at(local), incoming: .integer(9), incomingVersion: Self.at(incoming),
            knownVersion: Self.at(known)
        ) { _, incoming in
            called = true
            return incoming.value
        }
        #expect(called, "known \(known), local \(local), incoming \(incoming)")
    }

    @Test func theFunctionSeesBothValuesWithTheirVersions() {
        var seen: [MergeCandidate] = []
        _ = CustomMerge.decide(local: .text("a"), localVersion: Self.at(1, "x"), incoming: .text("b"), incomingVersion: Self.at(2, "y")) {
            seen = [$0, $1]
            return $1.value
        }
        #expect(
            seen == [
                MergeCandidate(value: .text("a"), version: Self.at(1, "x")), MergeCandidate(value: .text("b"), version: Self.at(2, "y")),
            ])
    }

    @Test func theDefaultFrameDecidesWithoutTheFunction() {
        // No local row or version: the incoming value.
        #expect(
            CustomMerge.decide(local: nil, localVersion: nil, incoming: .integer(1), incomingVersion: Self.at(2), merge: Self.never)
                == CustomMerge.Decision(value: .integer(1), version: Self.at(2), localWins: false))
        #expect(
            CustomMerge.decide(local: .integer(5), localVersion: nil, incoming: .integer(1), incomingVersion: Self.at(2), merge: Self.never)
                == CustomMerge.Decision(value: .integer(1), version: Self.at(2), localWins: false))
        // A record without the field (an older app version): the local value stays, and goes.
        #expect(
            CustomMerge.decide(local: .integer(5), localVersion: Self.at(3), incoming: nil, incomingVersion: nil, merge: Self.never)
                == CustomMerge.Decision(value: nil, version: Self.at(3), localWins: true))
        // A field without a version loses, as under the default rule.
        #expect(
            CustomMerge.decide(local: .integer(5), localVersion: Self.at(3), incoming: .integer(1), incomingVersion: nil, merge: Self.never)
                == CustomMerge.Decision(value: nil, version: Self.at(3), localWins: true))
        // Equal values: nothing to merge (a page applied twice).
        #expect(
            CustomMerge.decide(
                local: .integer(5), localVersion: Self.at(3), incoming: .integer(5), incomingVersion: Self.at(2), merge: Self.never)
                == CustomMerge.Decision(value: .integer(5), version: Self.at(3), localWins: false))
    }
}
