import Foundation
import Strata

/// Sharing between two real processes, each with its own database file, through a live cloud:
/// `scorekeeper-live share GAME --with USER` on the owner's side, `scorekeeper-live accept URL`
/// on the other user's. Both use the default database and sync engine the command
/// bootstrapped.
public enum LiveSharing {
    /// Shares the game titled `title` with `user` (read-only or read-write; a second call
    /// changes the permission), and says what to hand over: the URL, which carries what the
    /// invitation grants and, with end-to-end encryption, the key that opens the game.
    public static func share(game title: String, with user: String, readOnly: Bool) async throws -> String {
        @Dependency(\.defaultSyncEngine) var engine
        let game = try await engine.database.read { db in try Lookup.game(db, titled: title) }
        let permission: CloudShare.Permission = readOnly ? .readOnly : .readWrite
        let shared = try await engine.share(record: game) { share in
            share.title = game.title
            share.participants.removeAll { $0.user == user && $0.role != .owner }
            share.participants.append(CloudShare.Participant(user: user, permission: permission))
        }
        let url = shared.url(inviting: permission)
        return [
            "Shared \(game.title) with \(user), \(readOnly ? "read-only" : "read-write").",
            "Share URL: \(url)",
            "",
            try await games(engine),
            "",
            "Next, as \(user): scorekeeper-live accept \"\(url)\" --database THEIR-FILE --cloud URL",
        ].joined(separator: "\n")
    }

    /// Accepts the share `url` names as the current user, fetches the game and its players,
    /// and lists the games with who shares them.
    public static func accept(url: String) async throws -> String {
        guard let invitation = CloudShare.invitation(fromURL: url) else { throw ScorekeeperError.notAShareURL(url) }
        @Dependency(\.defaultSyncEngine) var engine
        let share = try await engine.acceptShare(url: url)
        let permission = share.currentUserParticipant?.permission ?? invitation.permission ?? share.publicPermission
        return [
            "Accepted \(share.owner)'s \(share.title.map { "\"\($0)\"" } ?? "game"), \(permission == .readWrite ? "read-write" : "read-only").",
            "",
            try await games(engine),
        ].joined(separator: "\n")
    }

    /// The games with each one's sharing, on the engine's writer (where the metadatabase is).
    static func games(_ engine: SyncEngine) async throws -> String {
        let rows = try await engine.database.writeWithoutTransaction { db in
            try GameSharingRow.install(on: db)
            return try GameSharingRow.all.fetchAll(db)
        }
        return Rendering.sharedGames(rows)
    }
}
