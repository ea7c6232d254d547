import StrataCloud

/// The body of `saveShare`; the response is the share as stored.
public struct SaveShareRequest: Codable, Sendable, Hashable {
    /// The share to create or update.
    public var share: CloudShare

    /// A request saving `share`.
    public init(share: CloudShare) {
        self.share = share
    }
}

/// The body of `fetchShare` and `deleteShare`.
public struct ShareRootRequest: Codable, Sendable, Hashable {
    /// The shared root record.
    public var rootRecordID: CloudRecordID

    /// A request about the share of `rootRecordID`.
    public init(rootRecordID: CloudRecordID) {
        self.rootRecordID = rootRecordID
    }
}

/// The body of `POST /v1/shares/accept`; the response is the accepted share.
public struct AcceptShareRequest: Codable, Sendable, Hashable {
    /// The share's URL, as `CloudShare.url` gives it.
    public var url: String

    /// A request accepting the share at `url`.
    public init(url: String) {
        self.url = url
    }
}
