/// A shared root record: the share as the cloud holds it, and what the owner hands to others.
public struct SharedRecord: Sendable, Hashable {
    /// The share: owner, participants, permissions.
    public var share: CloudShare
    /// With end-to-end encryption, the secret that opens the zone's keys in the share for
    /// whoever accepts through this URL (as the URL's fragment `#k=…`, which never reaches the
    /// cloud): a participant who never synced before has no public key the owner could seal
    /// to yet. Nil without encryption.
    public var linkKey: String?
    /// The URL another user's engine passes to `acceptShare(url:)`: the share's URL, saying
    /// what the invitation grants (``invitedPermission``, as `?permission=…`), with the link key
    /// as its fragment. It works in another process, on another device, for another user.
    public var url: String { url(inviting: invitedPermission) }

    /// The URL inviting with `permission` (a participant's own, when the share has several).
    public func url(inviting permission: CloudShare.Permission) -> String {
        share.url(inviting: permission) + (linkKey.map { "#k=" + $0 } ?? "")
    }

    /// What ``url`` invites to: the permission of the participant invited last (the one a
    /// `share(record:)` call usually adds), or the share's public permission when no one was
    /// invited by name.
    public var invitedPermission: CloudShare.Permission {
        let invited = share.participants.last { $0.role != .owner && $0.acceptance != .removed }
        return invited?.permission ?? share.publicPermission
    }

    /// A shared record of `share`.
    public init(share: CloudShare, linkKey: String? = nil) {
        self.share = share
        self.linkKey = linkKey
    }
}
