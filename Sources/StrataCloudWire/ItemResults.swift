import StrataCloud

/// One record's outcome in a fetch or a save: the record, or why not.
public struct RecordResult: Codable, Sendable, Hashable {
    /// The record asked for or saved.
    public var id: CloudRecordID
    /// The record, on success.
    public var record: CloudRecord?
    /// A save's new change tag, on success, in place of the record, when the request asked
    /// for ``ModifyAnswer/changeTags``.
    public var changeTag: String?
    /// The failure, otherwise.
    public var error: CloudErrorBody?

    /// An accepted save answered with its new change tag alone.
    public init(id: CloudRecordID, changeTag: String) {
        self.id = id
        self.changeTag = changeTag
    }

    /// The wire form of one entry of a result map.
    public init(id: CloudRecordID, result: Result<CloudRecord, CloudError>) {
        self.id = id
        switch result {
        case .success(let record): self.record = record
        case .failure(let error): self.error = CloudErrorBody(error)
        }
    }

    /// The entry's result.
    ///
    /// - Throws: ``CloudWireError`` when the entry has neither a record nor a valid error.
    public func result() throws(CloudWireError) -> Result<CloudRecord, CloudError> {
        if let error { return .failure(try error.cloudError()) }
        guard let record else { throw CloudWireError.malformedError("record result without record or error") }
        return .success(record)
    }

    /// A result map as wire entries, sorted so equal maps encode to equal bytes.
    public static func entries(_ results: [CloudRecordID: Result<CloudRecord, CloudError>]) -> [RecordResult] {
        // Each id's text made once, not at every comparison: a sort of 400 answers made
        // 7,000 of them, a tenth of the service's work on a request.
        results.map { (order: $0.key.description, entry: RecordResult(id: $0.key, result: $0.value)) }
            .sorted { $0.order < $1.order }.map(\.entry)
    }

    /// The result map wire entries describe.
    public static func map(_ entries: [RecordResult]) throws(CloudWireError) -> [CloudRecordID: Result<CloudRecord, CloudError>] {
        var results: [CloudRecordID: Result<CloudRecord, CloudError>] = [:]
        for entry in entries { results[entry.id] = try entry.result() }
        return results
    }
}

/// One delete's outcome: success, or why not.
public struct DeleteResult: Codable, Sendable, Hashable {
    /// The record deleted.
    public var id: CloudRecordID
    /// The failure; absent on success.
    public var error: CloudErrorBody?

    /// The wire form of one entry of a result map.
    public init(id: CloudRecordID, result: Result<Void, CloudError>) {
        self.id = id
        if case .failure(let error) = result { self.error = CloudErrorBody(error) }
    }

    /// The entry's result.
    public func result() throws(CloudWireError) -> Result<Void, CloudError> {
        if let error { return .failure(try error.cloudError()) }
        return .success(())
    }

    /// A result map as wire entries, sorted so equal maps encode to equal bytes.
    public static func entries(_ results: [CloudRecordID: Result<Void, CloudError>]) -> [DeleteResult] {
        results.map { (order: $0.key.description, entry: DeleteResult(id: $0.key, result: $0.value)) }
            .sorted { $0.order < $1.order }.map(\.entry)
    }

    /// The result map wire entries describe.
    public static func map(_ entries: [DeleteResult]) throws(CloudWireError) -> [CloudRecordID: Result<Void, CloudError>] {
        var results: [CloudRecordID: Result<Void, CloudError>] = [:]
        for entry in entries { results[entry.id] = try entry.result() }
        return results
    }
}
