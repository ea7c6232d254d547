/// A shared root record: the share as the cloud holds it, and what the owner hands to others.
public struct SharedRecord: Sendable, Hashable {
    /// The share: owner, participants, permissions.
    public var share: CloudShare
    /// With end-to-end encryption, the secret that opens the zone's keys in the share for
    /// whoever accepts through this URL (as the URL's fragment `#k=…`, which never reaches the
    /// cloud): a participant who never synced before has no public key the owner could seal
    /// to yet. Nil without encryption.
    public var linkKey: String?
    /// The URL another user's engine passes to `acceptShare(url:)`: the share's URL, with the
    /// link key as its fragment.
    public var url: String { share.url + (linkKey.map { "#k=" + $0 } ?? "") }

    /// A shared record of `share`.
    public init(share: CloudShare, linkKey: String? = nil) {
        self.share = share
        self.linkKey = linkKey
    }
}
