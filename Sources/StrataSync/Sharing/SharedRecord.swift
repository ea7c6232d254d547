/// A shared root record: the share as the cloud holds it, and what the owner hands to others.
public struct SharedRecord: Sendable, Hashable {
    /// The share: owner, participants, permissions.
    public var share: CloudShare
    /// The URL another user's engine passes to `acceptShare(url:)`.
    public var url: String { share.url }

    /// A shared record of `share`.
    public init(share: CloudShare) {
        self.share = share
    }
}
