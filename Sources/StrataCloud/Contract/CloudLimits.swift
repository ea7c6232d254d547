/// What a cloud accepts in one request.
public struct CloudLimits: Hashable, Sendable {
    /// Saves plus deletes (or fetched ids) in one request. CloudKit documents 400.
    public var maximumItemsPerRequest: Int
    /// The encoded size of the saved records in one request, assets excluded. CloudKit
    /// documents about 2 MB.
    public var maximumBytesPerRequest: Int
    /// The encoded size of all records in a user's zones, whoever wrote them (a participant's
    /// saves count against the owner); nil for no quota. A request that would grow a user's
    /// records past it fails whole with ``CloudError/quotaExceeded``; deletes always pass.
    public var maximumBytesPerUser: Int64?

    /// Limits; the defaults are CloudKit's, with no quota.
    public init(maximumItemsPerRequest: Int = 400, maximumBytesPerRequest: Int = 2_000_000, maximumBytesPerUser: Int64? = nil) {
        self.maximumItemsPerRequest = maximumItemsPerRequest
        self.maximumBytesPerRequest = maximumBytesPerRequest
        self.maximumBytesPerUser = maximumBytesPerUser
    }
}

extension CloudLimits {
    /// The one check of a request's size that every cloud makes (MockCloud, the PostgreSQL
    /// store, the HTTP service before decoding further): over ``maximumItemsPerRequest``
    /// saves plus deletes, ``maximumBytesPerRequest`` encoded bytes of saved records, or
    /// `maximumRecordBytes` for one record (the service's own bound; the others pass none),
    /// the request fails whole with ``CloudError/limitExceeded``, which the engine answers by
    /// splitting.
    package func checkModify(saving records: [CloudRecord], deletingCount: Int, maximumRecordBytes: Int = .max) throws(CloudError) {
        guard records.count + deletingCount <= maximumItemsPerRequest else { throw .limitExceeded }
        var total = 0
        for record in records {
            let size = record.encodedSize
            guard size <= maximumRecordBytes else { throw .limitExceeded }
            total += size
            // Checked as it grows: a request past the bound stops being summed (and can
            // never overflow).
            guard total <= maximumBytesPerRequest else { throw .limitExceeded }
        }
    }

    /// The check of a fetch of `count` records by id: at most ``maximumItemsPerRequest``.
    package func checkFetch(count: Int) throws(CloudError) {
        guard count <= maximumItemsPerRequest else { throw .limitExceeded }
    }
}
