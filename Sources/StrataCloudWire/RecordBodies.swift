import StrataCloud

/// The body of `fetchRecords`.
public struct FetchRecordsRequest: Codable, Sendable, Hashable {
    /// The records to fetch.
    public var ids: [CloudRecordID]

    /// A request for `ids`.
    public init(ids: [CloudRecordID]) {
        self.ids = ids
    }
}

/// The response of `fetchRecords`: one entry per id asked for.
public struct FetchRecordsResponse: Codable, Sendable, Hashable {
    /// Each record, or why not.
    public var results: [RecordResult]

    /// The wire form of a result map.
    public init(_ results: [CloudRecordID: Result<CloudRecord, CloudError>]) {
        self.results = RecordResult.entries(results)
    }
}

/// The body of `modifyRecords`.
public struct ModifyRecordsRequest: Codable, Sendable, Hashable {
    /// Records to save, each with the change tag it was based on.
    public var saving: [CloudRecord]
    /// Records to delete.
    public var deleting: [CloudRecordID]
    /// What an accepted save's answer carries; absent means ``ModifyAnswer/records``.
    public var answer: ModifyAnswer?

    /// A request saving and deleting records.
    public init(saving: [CloudRecord], deleting: [CloudRecordID], answer: ModifyAnswer? = nil) {
        self.saving = saving
        self.deleting = deleting
        self.answer = answer
    }

    /// Saves plus deletes: what counts against `CloudLimits.maximumItemsPerRequest`.
    public var itemCount: Int { saving.count + deleting.count }
}

/// The response of `modifyRecords`: per-item outcomes.
public struct ModifyRecordsResponse: Codable, Sendable, Hashable {
    /// Each save's outcome.
    public var saveResults: [RecordResult]
    /// Each delete's outcome.
    public var deleteResults: [DeleteResult]

    /// The wire form of a modify result; with ``ModifyAnswer/changeTags``, an accepted save
    /// carries only its new change tag.
    public init(_ result: CloudModifyResult, answer: ModifyAnswer = .records) {
        saveResults = RecordResult.entries(result.saveResults)
        if answer == .changeTags {
            saveResults = saveResults.map { entry in
                guard let record = entry.record else { return entry }
                return RecordResult(id: entry.id, changeTag: record.changeTag ?? "")
            }
        }
        deleteResults = DeleteResult.entries(result.deleteResults)
    }

    /// The modify result this response describes.
    ///
    /// - Parameter saving: the records the request saved: an answer that carries only a change
    ///   tag (``ModifyAnswer/changeTags``) stands for the last of them with its id, with that
    ///   tag, which is what the cloud stored.
    /// - Throws: ``CloudWireError`` for an entry without a record, a tag or an error, or with a
    ///   tag for a record the request did not save.
    public func modifyResult(saving: [CloudRecord] = []) throws(CloudWireError) -> CloudModifyResult {
        var sent: [CloudRecordID: CloudRecord] = [:]
        if saveResults.contains(where: { $0.record == nil && $0.changeTag != nil }) {
            for record in saving { sent[record.id] = record }
        }
        var saves: [CloudRecordID: Result<CloudRecord, CloudError>] = [:]
        saves.reserveCapacity(saveResults.count)
        for entry in saveResults {
            if entry.record == nil, entry.error == nil, let tag = entry.changeTag {
                guard var record = sent[entry.id] else {
                    throw CloudWireError.malformedError("a change tag for \(entry.id), which the request did not save")
                }
                record.changeTag = tag
                saves[entry.id] = .success(record)
            } else {
                saves[entry.id] = try entry.result()
            }
        }
        return CloudModifyResult(saveResults: saves, deleteResults: try DeleteResult.map(deleteResults))
    }
}

/// What the answer to an accepted save carries.
public enum ModifyAnswer: String, Codable, Sendable, Hashable, CaseIterable {
    /// The record as the cloud stored it (the default: readable on its own).
    case records
    /// Only the record's new change tag: the cloud stored what was sent, with that tag, so a
    /// client holding the request needs no more; half the bytes of a first sync's traffic.
    case changeTags
}
