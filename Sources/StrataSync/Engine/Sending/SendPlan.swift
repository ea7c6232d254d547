/// The decisions of one send, apart from its I/O: how many records a batch takes, which
/// records are left out, when a batch that made no progress (or a send that keeps producing
/// work) stops, and what the send finally reports. `SyncEngine.send` does the reading,
/// uploading and recording; this says what comes next. No database, no cloud: unit-tested
/// alone (SendPlanTests). Record names compare by their bytes (``ExactNames``), as SQLite
/// compares the keys they come from.
struct SendPlan {
    /// What to do with the next batch the database offers.
    enum Step: Equatable {
        /// Send these records.
        case send([String])
        /// Nothing left to send (apart from records that failed for good).
        case finished
        /// The send has run more rounds than its pending work can explain: stop and report
        /// these records as stalled.
        case stalled([String])
    }

    /// What the cloud's answer to a whole request was, as far as planning cares.
    enum RequestOutcome: Equatable {
        /// Over the cloud's limits: split, unless a batch of one was refused.
        case limitExceeded
        /// The answers were recorded; `progress` counts records whose state moved.
        case recorded(progress: Int, needsZone: Bool, needsFetch: Bool, permanentFailures: ExactKeyed<CloudError>, firstFailure: String?)
    }

    /// What a finished send reports.
    enum Ending: Equatable {
        case done
        /// Records that failed for good, by record name.
        case failed([String: CloudError])
        /// Records that made no progress: the send would repeat them forever.
        case stalled(records: [String], lastFailure: String?)
    }

    private(set) var limit: Int
    private(set) var rounds = 0
    let maximumRounds: Int
    private(set) var permanentFailures = ExactKeyed<CloudError>()
    private(set) var stalledRecords: [String] = []
    private(set) var lastFailure: String?
    /// Records that failed for good and that the cloud never had: their children wait.
    private var neverSentFailures = ExactNames()
    /// Saves held back in this send: their parent failed for good before it ever reached the
    /// cloud (or was held back itself). Sent, they would reach the cloud without it and be
    /// refused (`referenceViolation`), after a refusal of the whole zone as after one of the
    /// parent alone; they stay pending for the next send.
    private(set) var heldBack = ExactNames()

    /// A plan for `pending` records in batches of at most `batchSize`. The bound on rounds
    /// guards against answers that keep producing work (a conflict that merges into a new
    /// edit every time); it grows with what is pending, so a large first upload still goes out
    /// whole in one send.
    init(batchSize: Int, pending: Int) {
        limit = max(1, batchSize)
        maximumRounds = 64 + 2 * (max(0, pending) / limit + 1)
    }

    /// Records that failed for good stay out of later batches.
    func isExcluded(_ record: String) -> Bool {
        permanentFailures[record] != nil
    }

    /// The records later batches are built without: those that failed for good, and those
    /// held back behind them.
    var leftOut: ExactNames { permanentFailures.names.union(heldBack) }

    /// Among the records that failed for good, those the cloud never had (`records`, by name).
    mutating func failedBeforeReachingTheCloud(_ records: ExactNames) {
        neverSentFailures.formUnion(records)
    }

    /// The records of a batch (parents before their children, as batches are built) that may
    /// go, by name; the others are left out, and saves whose parent cannot go yet are held back
    /// (``heldBack``), with their own children.
    mutating func admit(_ batch: [(name: String, parent: String?)]) -> ExactNames {
        var candidates = batch.filter { !isExcluded($0.name) && !heldBack.contains($0.name) }
        // Until nothing moves: a table whose rows are each other's parents sorts a child
        // before its parent when its key sorts first.
        while true {
            let held = candidates.filter { item in
                item.parent.map { neverSentFailures.contains($0) || heldBack.contains($0) } ?? false
            }
            guard !held.isEmpty else { break }
            heldBack.formUnion(held.map(\.name))
            candidates.removeAll { heldBack.contains($0.name) }
        }
        return ExactNames(candidates.map(\.name))
    }

    /// The next step, given the batch the database offers (already without excluded records).
    mutating func next(offered batch: [String]) -> Step {
        guard !batch.isEmpty else { return .finished }
        rounds += 1
        guard rounds <= maximumRounds else {
            stalledRecords = batch
            return .stalled(batch)
        }
        return .send(batch)
    }

    /// Takes the answer to `batch`, one of the batches sent (two may travel at once, so the
    /// caller names it); false when the send must stop (a round that changed nothing would
    /// change nothing again: the same records, the same answers).
    mutating func record(_ outcome: RequestOutcome, of batch: [String]) -> Bool {
        switch outcome {
        case .limitExceeded:
            guard batch.count > 1 else {
                // One record over the limits: splitting cannot help. The caller reports the
                // cloud's error itself; this plan only refuses to loop.
                return false
            }
            limit = max(1, min(limit, batch.count / 2))
            return true
        case .recorded(let progress, let needsZone, let needsFetch, let failures, let firstFailure):
            permanentFailures.merge(failures) { $1 }
            lastFailure = firstFailure ?? lastFailure
            // A round whose only news is permanent failures leaves the others of its batch to
            // go again without them.
            if progress == 0 && !needsZone && !needsFetch && failures.isEmpty {
                stalledRecords = batch
                return false
            }
            return true
        }
    }

    /// What the send reports once it stops.
    var ending: Ending {
        if !stalledRecords.isEmpty { return .stalled(records: stalledRecords, lastFailure: lastFailure) }
        if !permanentFailures.isEmpty { return .failed(permanentFailures.dictionary) }
        return .done
    }
}
