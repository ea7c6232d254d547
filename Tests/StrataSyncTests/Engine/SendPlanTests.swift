import Testing

@testable import StrataSync

/// The send's decisions alone: no database, no cloud.
@Suite(.timeLimit(.minutes(1)))
struct SendPlanTests {
    static func recorded(
        progress: Int, needsZone: Bool = false, needsFetch: Bool = false, failures: [String: CloudError] = [:], firstFailure: String? = nil
    ) -> SendPlan.RequestOutcome {
        .recorded(
            progress: progress, needsZone: needsZone, needsFetch: needsFetch,
            permanentFailures: ExactKeyed(failures.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 }), firstFailure: firstFailure)
    }

    @Test func anEmptyOfferFinishesTheSend() {
        var plan = SendPlan(batchSize: 10, pending: 0)
        do { let step = plan.next(offered: []); #expect(step == .finished) }
        #expect(plan.ending == .done)
    }

    @Test func batchesGoOutWhileTheyMakeProgress() {
        var plan = SendPlan(batchSize: 2, pending: 4)
        do { let step = plan.next(offered: ["a", "b"]); #expect(step == .send(["a", "b"])) }
        do { let goesOn = plan.record(Self.recorded(progress: 2), of: ["a", "b"]); #expect(goesOn) }
        do { let step = plan.next(offered: ["c", "d"]); #expect(step == .send(["c", "d"])) }
        do { let goesOn = plan.record(Self.recorded(progress: 1), of: ["c", "d"]); #expect(goesOn) }
        do { let step = plan.next(offered: []); #expect(step == .finished) }
        #expect(plan.ending == .done)
    }

    @Test func overTheLimitsHalvesTheBatchDownToOne() {
        var plan = SendPlan(batchSize: 9, pending: 9)
        do { let step = plan.next(offered: Array(repeating: "r", count: 9)); #expect(step == .send(Array(repeating: "r", count: 9))) }
        do { let goesOn = plan.record(.limitExceeded, of: Array(repeating: "r", count: 9)); #expect(goesOn) }
        #expect(plan.limit == 4)
        _ = plan.next(offered: ["a", "b", "c", "d"])
        do { let goesOn = plan.record(.limitExceeded, of: ["a", "b", "c", "d"]); #expect(goesOn) }
        #expect(plan.limit == 2)
        _ = plan.next(offered: ["a", "b"])
        do { let goesOn = plan.record(.limitExceeded, of: ["a", "b"]); #expect(goesOn) }
        #expect(plan.limit == 1)
        _ = plan.next(offered: ["a"])
        // One record over the limits: splitting cannot help, so the plan does not loop.
        do { let goesOn = plan.record(.limitExceeded, of: ["a"]); #expect(!goesOn) }
        #expect(plan.limit == 1)
    }

    @Test func aRoundThatChangesNothingStallsNamingItsRecords() {
        var plan = SendPlan(batchSize: 5, pending: 2)
        _ = plan.next(offered: ["a", "b"])
        do { let goesOn = plan.record(Self.recorded(progress: 0, firstFailure: "a: zoneBusy"), of: ["a", "b"]); #expect(!goesOn) }
        #expect(plan.ending == .stalled(records: ["a", "b"], lastFailure: "a: zoneBusy"))
    }

    @Test func zoneOrFetchNeedsAreProgressOfTheirOwn() {
        var plan = SendPlan(batchSize: 5, pending: 1)
        _ = plan.next(offered: ["a"])
        do { let goesOn = plan.record(Self.recorded(progress: 0, needsZone: true), of: ["a"]); #expect(goesOn) }
        _ = plan.next(offered: ["a"])
        do { let goesOn = plan.record(Self.recorded(progress: 0, needsFetch: true), of: ["a"]); #expect(goesOn) }
        #expect(plan.ending == .done)
    }

    @Test func permanentFailuresLeaveTheRestOfTheirBatchToGoAgainAndAreReported() {
        var plan = SendPlan(batchSize: 5, pending: 2)
        _ = plan.next(offered: ["a", "b"])
        do {
            let goesOn = plan.record(Self.recorded(progress: 0, failures: ["a": .permissionFailure(nil)]), of: ["a", "b"]); #expect(goesOn)
        }
        #expect(plan.isExcluded("a"))
        #expect(!plan.isExcluded("b"))
        do { let step = plan.next(offered: ["b"]); #expect(step == .send(["b"])) }
        do { let goesOn = plan.record(Self.recorded(progress: 1), of: ["b"]); #expect(goesOn) }
        do { let step = plan.next(offered: []); #expect(step == .finished) }
        #expect(plan.ending == .failed(["a": .permissionFailure(nil)]))
    }

    @Test func theLastFailureSurvivesACleanRound() {
        var plan = SendPlan(batchSize: 1, pending: 2)
        _ = plan.next(offered: ["a"])
        do { let goesOn = plan.record(Self.recorded(progress: 1, firstFailure: "a: first"), of: ["a"]); #expect(goesOn) }
        _ = plan.next(offered: ["b"])
        do { let goesOn = plan.record(Self.recorded(progress: 0), of: ["b"]); #expect(!goesOn) }
        #expect(plan.ending == .stalled(records: ["b"], lastFailure: "a: first"))
    }

    /// A send whose answers keep producing work stops after a bound that grows with what was
    /// pending, so a large first upload still goes out whole: exactly at the bound it sends,
    /// one round past it it stalls.
    @Test(arguments: [(1, 0), (1, 1), (10, 99), (10, 100), (400, 100_000)])
    func roundsAreBoundedByWhatWasPending(batchSize: Int, pending: Int) {
        var plan = SendPlan(batchSize: batchSize, pending: pending)
        let bound = 64 + 2 * (pending / batchSize + 1)
        #expect(plan.maximumRounds == bound)
        for round in 1...bound {
            let step = plan.next(offered: ["again"])
            guard step == .send(["again"]) else {
                Issue.record("round \(round) of \(bound) did not send")
                return
            }
            _ = plan.record(Self.recorded(progress: 1), of: ["again"])
        }
        do { let step = plan.next(offered: ["again"]); #expect(step == .stalled(["again"])) }
        #expect(plan.ending == .stalled(records: ["again"], lastFailure: nil))
    }

    @Test func aBatchSizeBelowOneStillSendsOneAtATime() {
        var plan = SendPlan(batchSize: 0, pending: 3)
        #expect(plan.limit == 1)
        #expect(plan.maximumRounds == 64 + 2 * 4)
        plan = SendPlan(batchSize: -5, pending: -1)
        #expect(plan.limit == 1)
    }

    /// A parent that failed for good before the cloud had it holds back its children, and
    /// theirs, in later batches and in the rest of the same batch; a parent the cloud has
    /// (its update refused) holds back nothing.
    @Test func childrenWaitForAParentRefusedBeforeReachingTheCloud() {
        var plan = SendPlan(batchSize: 10, pending: 10)
        do { let step = plan.next(offered: ["new", "old"]); #expect(step == .send(["new", "old"])) }
        let refused: [String: CloudError] = [
            "new": .permissionFailure(CloudRecordID(name: "new", zone: CloudZoneID(name: "z", owner: "o"))),
            "old": .permissionFailure(CloudRecordID(name: "old", zone: CloudZoneID(name: "z", owner: "o"))),
        ]
        do { let goesOn = plan.record(Self.recorded(progress: 0, failures: refused), of: ["new", "old"]); #expect(goesOn) }
        plan.failedBeforeReachingTheCloud(["new"])
        let admitted = plan.admit([
            ("new", nil), ("child", "new"), ("grandchild", "child"), ("other", "old"), ("free", nil), ("late", "grandchild"),
        ])
        #expect(admitted == ["other", "free"])
        #expect(plan.heldBack == ["child", "grandchild", "late"])
        #expect(plan.leftOut == ["new", "old", "child", "grandchild", "late"])
        // Held back in a later batch too, and never reported as stalled or failed.
        #expect(plan.admit([("child", "new"), ("great", "late")]).isEmpty)
        #expect(plan.heldBack.contains("great"))
        #expect(plan.ending == .failed(refused))
    }

    /// Rows of one table that are each other's parents sort by key, not parents first: a
    /// grandchild ahead of its held-back parent in the batch is held back too.
    @Test func aChildAheadOfItsHeldBackParentInTheBatchWaitsToo() {
        var plan = SendPlan(batchSize: 10, pending: 10)
        _ = plan.next(offered: ["a"])
        let refused: [String: CloudError] = ["a": .permissionFailure(CloudRecordID(name: "a", zone: CloudZoneID(name: "z", owner: "o")))]
        _ = plan.record(Self.recorded(progress: 0, failures: refused), of: ["a"])
        plan.failedBeforeReachingTheCloud(["a"])
        let admitted = plan.admit([("c", "b"), ("d", "c"), ("b", "a"), ("e", nil), ("f", "e")])
        #expect(admitted == ["e", "f"])
        #expect(plan.heldBack == ["b", "c", "d"])
    }

    /// Two batches travel at once: each answer is taken for the batch it answers, in either
    /// order. A stall names the batch that made no progress, not the one sent last; over the
    /// limits, the batch that was refused is halved, and a later refusal never grows it back.
    @Test func answersToTwoBatchesInFlightAreTakenForTheirOwnBatch() {
        var plan = SendPlan(batchSize: 4, pending: 8)
        do { let step = plan.next(offered: ["a", "b", "c", "d"]); #expect(step == .send(["a", "b", "c", "d"])) }
        do { let step = plan.next(offered: ["e", "f", "g", "h"]); #expect(step == .send(["e", "f", "g", "h"])) }
        do { let goesOn = plan.record(Self.recorded(progress: 0, firstFailure: "a: busy"), of: ["a", "b", "c", "d"]); #expect(!goesOn) }
        do { let goesOn = plan.record(Self.recorded(progress: 4), of: ["e", "f", "g", "h"]); #expect(goesOn) }
        #expect(plan.ending == .stalled(records: ["a", "b", "c", "d"], lastFailure: "a: busy"))

        var limits = SendPlan(batchSize: 8, pending: 16)
        _ = limits.next(offered: (0..<8).map { "a\($0)" })
        _ = limits.next(offered: (0..<2).map { "b\($0)" })
        do { let goesOn = limits.record(.limitExceeded, of: (0..<8).map { "a\($0)" }); #expect(goesOn) }
        #expect(limits.limit == 4)
        do { let goesOn = limits.record(.limitExceeded, of: ["b0", "b1"]); #expect(goesOn) }
        #expect(limits.limit == 1)
        _ = limits.next(offered: ["c"])
        _ = limits.next(offered: ["d"])
        do { let goesOn = limits.record(.limitExceeded, of: ["c"]); #expect(!goesOn) }
        #expect(limits.limit == 1)
    }
}
