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

    /// A request saving and deleting records.
    public init(saving: [CloudRecord], deleting: [CloudRecordID]) {
        self.saving = saving
        self.deleting = deleting
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

    /// The wire form of a modify result.
    public init(_ result: CloudModifyResult) {
        saveResults = RecordResult.entries(result.saveResults)
        deleteResults = DeleteResult.entries(result.deleteResults)
    }

    /// The modify result this response describes.
    public func modifyResult() throws(CloudWireError) -> CloudModifyResult {
        CloudModifyResult(saveResults: try RecordResult.map(saveResults), deleteResults: try DeleteResult.map(deleteResults))
    }
}
