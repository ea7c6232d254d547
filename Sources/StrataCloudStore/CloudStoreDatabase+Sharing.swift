import Foundation
import Logging
import PostgresNIO
import StrataCloud

extension CloudStoreDatabase {
    /// Creates or updates the share of a root record in the user's own zone. The owner stays
    /// the owner; each other participant keeps the acceptance the store knows (a removed one
    /// is invited again). Participants who lose access see the shared records leave.
    ///
    /// - Throws: `CloudError.permissionFailure(_:)` through the shared database
    ///   or for another user's root; `CloudError.unknownItem(_:)` when the root
    ///   does not exist.
    public func saveShare(_ share: CloudShare) async throws -> CloudShare {
        let root = share.rootRecordID
        let (user, logger) = (user, logger)
        guard scope == .private, root.zone.owner == user else { throw CloudError.permissionFailure(root) }
        try share.checkWrappedKeys()
        let wrappedKeys = try Self.encodeWrappedKeys(share.wrappedKeys)
        return try await store.transaction(as: user) { connection in
            guard var position = try await Self.lockZone(root.zone, on: connection, logger: logger),
                try await Self.recordExists(root, on: connection, logger: logger)
            else { throw CloudError.unknownItem(root) }
            let before = try await Self.participants(of: root, on: connection, logger: logger)
            var known: [String: CloudShare.Participant] = [:]
            for participant in before { known[participant.user] = participant }
            var saved = share
            saved.participants = CloudSharingRules.savedParticipants(of: share, owner: user) { known[$0]?.acceptance }
            position += 1
            saved.changeTag = "t\(position)"
            saved.currentUser = nil
            let isNew = try await connection.query(
                "SELECT 1 FROM strata_cloud.shares WHERE owner = \(user) AND zone = \(root.zone.name) AND root = \(root.name)",
                logger: logger
            ).decode(Int.self).reduce(true) { _, _ in false }
            try await connection.perform(
                """
                INSERT INTO strata_cloud.shares (owner, zone, root, title, public_permission, change_tag, wrapped_keys)
                VALUES (\(user), \(root.zone.name), \(root.name), \(saved.title), \(saved.publicPermission.rawValue), \(saved.changeTag ?? ""),
                    \(wrappedKeys))
                ON CONFLICT (owner, zone, root) DO UPDATE SET
                    title = excluded.title, public_permission = excluded.public_permission, change_tag = excluded.change_tag,
                    wrapped_keys = excluded.wrapped_keys
                """,
                logger: logger)
            let accessChanged = try await Self.accessChanged(of: root, on: connection, logger: logger)
            try await connection.perform(
                "DELETE FROM strata_cloud.share_participants WHERE owner = \(user) AND zone = \(root.zone.name) AND root = \(root.name)",
                logger: logger)
            for (index, participant) in saved.participants.enumerated() {
                try await connection.perform(
                    """
                    INSERT INTO strata_cloud.share_participants
                        (owner, zone, root, participant, role, permission, acceptance, access_changed, position)
                    VALUES (\(user), \(root.zone.name), \(root.name), \(participant.user), \(participant.role.rawValue),
                        \(participant.permission.rawValue), \(participant.acceptance.rawValue), \(accessChanged[participant.user] ?? 0), \(index))
                    """,
                    logger: logger)
            }
            if isNew {
                // The subtree is under this share from now on; participants see it once they
                // accept, which restarts their feed of the zone.
                try await Self.setShareRoot(root.name, forSubtreeOf: root.name, in: root.zone, on: connection, logger: logger)
            }
            let leaving = Set(Self.audience(before, owner: user)).subtracting(Self.audience(saved.participants, owner: user))
            position = try await Self.recordDepartures(
                under: root.name, in: root.zone, for: leaving, after: position, on: connection, logger: logger)
            try await connection.perform(
                "UPDATE strata_cloud.zones SET sequence = \(position) WHERE owner = \(user) AND name = \(root.zone.name)", logger: logger)
            try await Self.markChanged([root.zone.name], of: user, notifying: before.map(\.user), on: connection, logger: logger)
            return try await Self.named(saved, on: connection, logger: logger).seen(by: user)
        }
    }

    /// The share of a root: for its owner through the private database, for a participant
    /// who accepted through the shared one.
    ///
    /// - Throws: `CloudError.unknownItem(_:)` when the root is not shared, or not
    ///   with this user.
    public func fetchShare(rootRecordID root: CloudRecordID) async throws -> CloudShare {
        guard reaches(root.zone) else { throw CloudError.unknownItem(root) }
        let (user, logger) = (user, logger)
        return try await store.transaction(as: user, repeatableRead: true) { connection in
            guard let share = try await Self.share(of: root, on: connection, logger: logger), share.permission(of: user) > .none else {
                throw CloudError.unknownItem(root)
            }
            return try await Self.named(share, on: connection, logger: logger).seen(by: user)
        }
    }

    /// Ends a share. Through the private database the owner ends it for everyone: the records
    /// stay in the zone and leave every participant's feed. Through the shared database a
    /// participant leaves it, for themselves only.
    public func deleteShare(rootRecordID root: CloudRecordID) async throws {
        let (user, logger) = (user, logger)
        switch scope {
        case .shared:
            guard root.zone.owner != user else { throw CloudError.unknownItem(root) }
            try await store.transaction(as: user) { connection in
                var left = false
                for try await result in try await connection.query(
                    "SELECT strata_cloud.leave_share(\(root.zone.owner), \(root.zone.name), \(root.name))", logger: logger
                ).decode(Bool.self) {
                    left = result
                }
                // (`leave_share` hints the participant's devices itself, when they did leave.)
                guard left else { throw CloudError.unknownItem(root) }
            }
        case .private:
            guard root.zone.owner == user else { throw CloudError.permissionFailure(root) }
            try await store.transaction(as: user) { connection in
                guard var position = try await Self.lockZone(root.zone, on: connection, logger: logger) else { return }
                let participants = try await Self.participants(of: root, on: connection, logger: logger)
                guard !participants.isEmpty else { return }
                let audience = Self.audience(participants, owner: user)
                position = try await Self.recordDepartures(
                    under: root.name, in: root.zone, for: Set(audience), after: position, on: connection, logger: logger)
                try await connection.perform(
                    "DELETE FROM strata_cloud.shares WHERE owner = \(user) AND zone = \(root.zone.name) AND root = \(root.name)",
                    logger: logger)
                // The subtree falls back under the share its parent is under, if any.
                var outerRoot: String?
                for try await parentRoot in try await connection.query(
                    """
                    SELECT p.share_root FROM strata_cloud.records r JOIN strata_cloud.records p
                        ON p.owner = r.owner AND p.zone = r.zone AND p.name = r.parent
                    WHERE r.owner = \(user) AND r.zone = \(root.zone.name) AND r.name = \(root.name)
                    """,
                    logger: logger
                ).decode(String?.self) {
                    outerRoot = parentRoot
                }
                if let outerRoot {
                    position = try await Self.moveSubtree(
                        of: root.name, in: root.zone, to: outerRoot, after: position, on: connection, logger: logger)
                } else {
                    try await Self.setShareRoot(nil, forSubtreeOf: root.name, in: root.zone, on: connection, logger: logger)
                }
                try await connection.perform(
                    "UPDATE strata_cloud.zones SET sequence = \(position) WHERE owner = \(user) AND name = \(root.zone.name)",
                    logger: logger)
                try await Self.markChanged([root.zone.name], of: user, notifying: participants.map(\.user), on: connection, logger: logger)
            }
        }
    }

    // MARK: Helpers

    /// Locks a zone the user may write and returns its position; nil when it does not exist.
    static func lockZone(_ zone: CloudZoneID, on connection: PostgresConnection, logger: Logger) async throws -> Int64? {
        var position: Int64?
        for try await sequence in try await connection.execute(
            PreparedStatements.LockZone(owner: zone.owner, zone: zone.name), logger: logger)
        {
            position = sequence
        }
        return position
    }

    static func recordExists(_ id: CloudRecordID, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        for try await _ in try await connection.query(
            "SELECT 1 FROM strata_cloud.records WHERE owner = \(id.zone.owner) AND zone = \(id.zone.name) AND name = \(id.name)",
            logger: logger
        ).decode(Int.self) {
            return true
        }
        return false
    }

    /// A share's participants, in the order the owner listed them.
    static func participants(
        of root: CloudRecordID, on connection: PostgresConnection, logger: Logger
    ) async throws -> [CloudShare.Participant] {
        var participants: [CloudShare.Participant] = []
        for try await (user, role, permission, acceptance) in try await connection.query(
            """
            SELECT participant, role, permission, acceptance FROM strata_cloud.share_participants
            WHERE owner = \(root.zone.owner) AND zone = \(root.zone.name) AND root = \(root.name) ORDER BY position
            """,
            logger: logger
        ).decode((String, String, String, String).self) {
            guard let role = CloudShare.Role(rawValue: role), let permission = CloudShare.Permission(rawValue: permission),
                let acceptance = CloudShare.Acceptance(rawValue: acceptance)
            else { continue }
            participants.append(CloudShare.Participant(user: user, role: role, permission: permission, acceptance: acceptance))
        }
        return participants
    }

    static func accessChanged(of root: CloudRecordID, on connection: PostgresConnection, logger: Logger) async throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        for try await (user, position) in try await connection.query(
            """
            SELECT participant, access_changed FROM strata_cloud.share_participants
            WHERE owner = \(root.zone.owner) AND zone = \(root.zone.name) AND root = \(root.name)
            """,
            logger: logger
        ).decode((String, Int64).self) {
            result[user] = position
        }
        return result
    }

    /// The share of `root` as the request's user may read it, or nil.
    static func share(of root: CloudRecordID, on connection: PostgresConnection, logger: Logger) async throws -> CloudShare? {
        var found: CloudShare?
        for try await (title, publicPermission, tag, wrappedKeys) in try await connection.query(
            """
            SELECT title, public_permission, change_tag, wrapped_keys FROM strata_cloud.shares
            WHERE owner = \(root.zone.owner) AND zone = \(root.zone.name) AND root = \(root.name)
            """,
            logger: logger
        ).decode((String?, String, String, Data?).self) {
            var share = CloudShare(
                rootRecordID: root, title: title, publicPermission: CloudShare.Permission(rawValue: publicPermission) ?? .none)
            share.changeTag = tag
            share.wrappedKeys = try decodeWrappedKeys(wrappedKeys)
            found = share
        }
        guard var share = found else { return nil }
        share.participants = try await participants(of: root, on: connection, logger: logger)
        return share
    }

    /// A share's wrapped keys as the `shares.wrapped_keys` column keeps them: the JSON of the
    /// dictionary (data in base64), or nil for none.
    static func encodeWrappedKeys(_ keys: [String: Data]) throws -> Data? {
        guard !keys.isEmpty else { return nil }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dataEncodingStrategy = .base64
        return try encoder.encode(keys)
    }

    /// The wrapped keys ``encodeWrappedKeys(_:)`` stored.
    static func decodeWrappedKeys(_ stored: Data?) throws -> [String: Data] {
        guard let stored else { return [:] }
        let decoder = JSONDecoder()
        decoder.dataDecodingStrategy = .base64
        return try decoder.decode([String: Data].self, from: stored)
    }

    /// The participants who see a share's records: accepted, with some permission, not the owner.
    static func audience(_ participants: [CloudShare.Participant], owner: String) -> [String] {
        participants.filter { $0.user != owner && $0.acceptance == .accepted && $0.permission > .none }.map(\.user)
    }

    static func setShareRoot(
        _ root: String?, forSubtreeOf name: String, in zone: CloudZoneID, on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.perform(
            """
            UPDATE strata_cloud.records r SET share_root = \(root)
            FROM strata_cloud.share_subtree(\(zone.owner), \(zone.name), \(name)) s
            WHERE r.owner = \(zone.owner) AND r.zone = \(zone.name) AND r.name = s.name
            """,
            logger: logger)
    }

    static func recordDepartures(
        under root: String, in zone: CloudZoneID, for audience: Set<String>, after position: Int64,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> Int64 {
        guard !audience.isEmpty else { return position }
        var last = position
        for try await end in try await connection.query(
            "SELECT strata_cloud.record_departures(\(zone.owner), \(zone.name), \(root), \(audience.sorted()), \(position))",
            logger: logger
        ).decode(Int64.self) {
            last = end
        }
        return last
    }
}
