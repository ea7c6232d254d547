import Foundation

/// A root record shared with other users, with its descendants (records whose parent chain
/// reaches the root).
///
/// The share lives in the owner's zone beside its root. Participants see the shared records in
/// their shared database once they accepted, and nothing else of the owner's zone.
public struct CloudShare: Sendable, Hashable, Codable {
    /// What a participant may do with the shared records.
    public enum Permission: String, Sendable, Hashable, Codable, Comparable {
        /// Nothing: the share is invisible to them.
        case none
        /// Read only; saves and deletes fail with ``CloudError/permissionFailure(_:)``.
        case readOnly
        /// Read, edit, add children and delete.
        case readWrite

        /// Orders by what the permission allows.
        public static func < (lhs: Self, rhs: Self) -> Bool {
            let order: [Permission] = [.none, .readOnly, .readWrite]
            return (order.firstIndex(of: lhs) ?? 0) < (order.firstIndex(of: rhs) ?? 0)
        }
    }

    /// A participant's part in the share.
    public enum Role: String, Sendable, Hashable, Codable {
        /// The user who shared the root.
        case owner
        /// A user the owner invited.
        case privateUser
        /// A user who joined through a public share.
        case publicUser
    }

    /// Whether a participant took part.
    public enum Acceptance: String, Sendable, Hashable, Codable {
        /// Invited, not accepted yet: they see nothing.
        case pending
        /// Accepted: the shared records are in their shared database.
        case accepted
        /// Removed by the owner, or left: they see nothing.
        case removed
    }

    /// One user of a share.
    public struct Participant: Sendable, Hashable, Codable {
        /// The user's name.
        public var user: String
        /// Their part.
        public var role: Role
        /// What they may do.
        public var permission: Permission
        /// Whether they accepted.
        public var acceptance: Acceptance
        /// The display name of the user's ``CloudUserProfile``, filled in by the cloud in every
        /// share it returns; nil when the user set no profile. What a share being saved carries
        /// here is ignored.
        public var displayName: String?
        /// The email address of the user's ``CloudUserProfile``, filled in by the cloud like
        /// ``displayName``; nil when the user gave none.
        public var email: String?

        /// A participant; invited users start ``Acceptance/pending``. Clouds fill in
        /// `displayName` and `email` from the user's profile.
        public init(
            user: String, role: Role = .privateUser, permission: Permission, acceptance: Acceptance = .pending,
            displayName: String? = nil, email: String? = nil
        ) {
            self.user = user
            self.role = role
            self.permission = permission
            self.acceptance = acceptance
            self.displayName = displayName
            self.email = email
        }
    }

    /// The shared root record.
    public var rootRecordID: CloudRecordID
    /// A title shown to invitees.
    public var title: String?
    /// What any user who has the URL may do; ``Permission/none`` for invited users only.
    public var publicPermission: Permission
    /// The owner and the invited or joined users.
    public var participants: [Participant]
    /// The server's change tag; nil for a share not saved yet.
    public var changeTag: String?
    /// The user the cloud answered, as it answers each user with their own view of the share;
    /// nil on a share built locally.
    public var currentUser: String?
    /// Keys the owner's sync engine sealed for the participants, by a name the engine chooses
    /// (for example a key version and a participant): opaque to the cloud, which stores and
    /// returns them as they are and never reads them. Every participant who can fetch the share
    /// sees every entry; each is readable only with its recipient's private key.
    public var wrappedKeys: [String: Data] = [:]

    /// A new share of `root`, owned by the root zone's owner.
    public init(rootRecordID: CloudRecordID, title: String? = nil, publicPermission: Permission = .none) {
        self.rootRecordID = rootRecordID
        self.title = title
        self.publicPermission = publicPermission
        participants = [Participant(user: rootRecordID.zone.owner, role: .owner, permission: .readWrite, acceptance: .accepted)]
        changeTag = nil
    }

    /// The owner: the user whose zone holds the root.
    public var owner: String { rootRecordID.zone.owner }

    /// What the owner hands to others to accept the share:
    /// `strata-share://<owner>/<zone>/<record>`, each part percent-encoded. A sync engine may
    /// add a fragment (`#…`) of its own; clouds ignore it, and engines never send it.
    public var url: String {
        let parts = [rootRecordID.zone.owner, rootRecordID.zone.name, rootRecordID.name].map(Self.encode)
        return "strata-share://" + parts.joined(separator: "/")
    }

    /// The URL of an invitation that grants `permission`: ``url`` with `?permission=readOnly`
    /// (or `readWrite`), so whoever receives it knows what accepting gives before accepting.
    /// Clouds read the root only; the permission a participant gets is the share's, set by the
    /// owner.
    public func url(inviting permission: Permission) -> String {
        url + "?permission=" + permission.rawValue
    }

    /// What a share URL says: the shared root, and the permission the invitation grants when
    /// the URL carries one (``url(inviting:)``).
    public struct Invitation: Sendable, Hashable {
        /// The shared root record.
        public var rootRecordID: CloudRecordID
        /// The permission the invitation grants; nil when the URL does not say.
        public var permission: Permission?

        /// An invitation to `rootRecordID` granting `permission`.
        public init(rootRecordID: CloudRecordID, permission: Permission?) {
            self.rootRecordID = rootRecordID
            self.permission = permission
        }
    }

    /// The invitation a share URL describes, or nil when `url` is not a share URL (a
    /// `permission` that is not `readOnly` or `readWrite` makes it none too).
    public static func invitation(fromURL url: String) -> Invitation? {
        guard let root = rootRecordID(fromURL: url) else { return nil }
        let address = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let query = address.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).dropFirst().first
        guard let query else { return Invitation(rootRecordID: root, permission: nil) }
        var permission: Permission?
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == "permission" else { continue }
            guard let value = Permission(rawValue: String(parts[1])), value != .none else { return nil }
            permission = value
        }
        return Invitation(rootRecordID: root, permission: permission)
    }

    /// The root a share URL names, or nil when `url` is not one. The query (`?permission=…`)
    /// and the fragment are not part of the address.
    public static func rootRecordID(fromURL url: String) -> CloudRecordID? {
        let prefix = "strata-share://"
        guard url.hasPrefix(prefix) else { return nil }
        // A fragment is the sharer's business (a sync engine's link key): never the cloud's;
        // the query says what the invitation grants, which the share itself decides.
        let beforeFragment = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let address = beforeFragment.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let parts = address.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.removingPercentEncoding }
        guard parts.count == 3, let owner = parts[0], let zone = parts[1], let name = parts[2],
            !owner.isEmpty, !zone.isEmpty, !name.isEmpty
        else { return nil }
        return CloudRecordID(name: name, zone: CloudZoneID(name: zone, owner: owner))
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:")

    private static func encode(_ part: String) -> String {
        part.addingPercentEncoding(withAllowedCharacters: unreserved) ?? part
    }

    /// The current user's own entry in the share: their role, permission and acceptance.
    public var currentUserParticipant: Participant? {
        currentUser.flatMap(participant)
    }

    /// Whether the current user owns the shared record.
    public var isOwnedByCurrentUser: Bool {
        currentUser == owner
    }

    /// The share as the cloud answers `user`.
    package func seen(by user: String) -> CloudShare {
        var share = self
        share.currentUser = user
        return share
    }

    /// The share with each participant's ``Participant/displayName`` and ``Participant/email``
    /// taken from `profile` (nil for a user without one): how clouds name participants.
    package func naming(_ profile: (String) -> CloudUserProfile?) -> CloudShare {
        var share = self
        for index in share.participants.indices {
            let found = profile(share.participants[index].user)
            share.participants[index].displayName = found?.displayName
            share.participants[index].email = found?.email
        }
        return share
    }

    /// The participant who is `user`, if any.
    public func participant(_ user: String) -> Participant? {
        participants.first { $0.user == user }
    }

    /// What `user` may do now: the owner everything, an accepted participant their permission,
    /// anyone else nothing.
    public func permission(of user: String) -> Permission {
        if user == owner { return .readWrite }
        guard let participant = participant(user), participant.acceptance == .accepted else { return .none }
        return participant.permission
    }
}

extension CloudShare {
    private enum CodingKeys: String, CodingKey {
        case rootRecordID, title, publicPermission, participants, changeTag, currentUser, wrappedKeys
    }

    /// Decodes a share; one written before shares carried keys has none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rootRecordID = try container.decode(CloudRecordID.self, forKey: .rootRecordID)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        publicPermission = try container.decode(Permission.self, forKey: .publicPermission)
        participants = try container.decode([Participant].self, forKey: .participants)
        changeTag = try container.decodeIfPresent(String.self, forKey: .changeTag)
        currentUser = try container.decodeIfPresent(String.self, forKey: .currentUser)
        wrappedKeys = try container.decodeIfPresent([String: Data].self, forKey: .wrappedKeys) ?? [:]
    }

    /// Encodes a share; ``wrappedKeys`` only when it has any.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(rootRecordID, forKey: .rootRecordID)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encode(publicPermission, forKey: .publicPermission)
        try container.encode(participants, forKey: .participants)
        try container.encodeIfPresent(changeTag, forKey: .changeTag)
        try container.encodeIfPresent(currentUser, forKey: .currentUser)
        if !wrappedKeys.isEmpty { try container.encode(wrappedKeys, forKey: .wrappedKeys) }
    }
}
