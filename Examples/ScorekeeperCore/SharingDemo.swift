import Foundation
import Strata

/// Two users in one process, as in the `share` and `accept` commands: Blob, who has the
/// sample games, shares one with Blob Jr through an in-memory cloud. Deterministic like
/// ``DevicesDemo``, so the share URL `share` prints is the one `accept` understands.
public struct SharingDemo: Sendable {
    public static let owner = "Blob"
    public static let participant = "Blob Jr"

    /// The game to share.
    public var game: String

    public init(game: String = "Weekly Poker Night") {
        self.game = game
    }

    /// Blob shares the game with Blob Jr: the URL to hand over, and Blob's games.
    public func share(readOnly: Bool) async throws -> String {
        let world = try await World()
        let shared = try await world.share(game, permission: readOnly ? .readOnly : .readWrite)
        return [
            "── \(Self.owner) shares \(game) with \(Self.participant), \(readOnly ? "read-only" : "read-write")",
            // The share's address: the link key in `shared.url` is this run's, and each run of the
            // demo makes its keys anew (the output stays the same on every run).
            "Share URL: \(shared.share.url)",
            "",
            "── \(Self.owner)'s games",
            try world.games(of: world.owner),
            "",
            "Next: scorekeeper accept \"\(shared.share.url)\"",
        ].joined(separator: "\n") + "\n"
    }

    /// The whole story: Blob shares the game read-only (the one `url` names, when given), Blob
    /// Jr accepts and sees it, a rename is refused, then Blob lets Blob Jr edit and the edits
    /// reach Blob.
    public func accept(url: String?) async throws -> String {
        let world = try await World()
        let title = try url.map { try world.gameTitle(fromShareURL: $0) } ?? game
        var output: [String] = []
        let shared = try await world.share(title, permission: .readOnly)
        output += ["── \(Self.owner) shares \(title) with \(Self.participant), read-only", "Share URL: \(shared.share.url)", ""]

        try await world.participant.engine.acceptShare(url: shared.url)
        output += [
            "── \(Self.participant) accepts: the game and its players arrive",
            try world.games(of: world.participant),
            "",
            try world.participant.keeper { try $0.players(game: title) },
            "",
        ]

        let newTitle = "\(title) at Blob Jr's"
        output.append("── \(Self.participant) tries to rename it")
        do {
            _ = try world.participant.keeper { try $0.renameGame(title, to: newTitle) }
            output.append("The rename went through: it should have been refused.")
        } catch let error as DatabaseError where error.isWritePermissionError {
            output.append("Refused: \(Self.participant) may only read \(title) (\(error.message)).")
        }
        output.append("")

        _ = try await world.share(title, permission: .readWrite)
        try await world.participant.engine.syncChanges()
        _ = try world.participant.keeper { try $0.renameGame(title, to: newTitle) }
        _ = try world.participant.keeper { try $0.addPlayer("Blob Jr", toGame: newTitle) }
        try await world.participant.engine.syncChanges()
        try await world.owner.engine.syncChanges()
        output += [
            "── \(Self.owner) lets \(Self.participant) edit; \(Self.participant) renames the game and joins it; both sync",
            "── \(Self.owner)'s games",
            try world.games(of: world.owner),
            "",
            try world.owner.keeper { try $0.players(game: newTitle) },
        ]
        return output.joined(separator: "\n") + "\n"
    }

    /// Blob's seeded device and Blob Jr's empty one, over one in-memory cloud.
    private struct World {
        let owner: DemoDevice
        let participant: DemoDevice

        init() async throws {
            let cloud = MockCloud(identifier: "iCloud.scorekeeper.demo")
            let log = SyncLogCollector()
            let clock = DemoClock()
            owner = try DemoDevice(name: "blob-phone", user: SharingDemo.owner, cloud: cloud, log: log, clock: clock)
            participant = try DemoDevice(name: "blob-jr-phone", user: SharingDemo.participant, cloud: cloud, log: log, clock: clock)
            try owner.seed()
            for device in [owner, participant] {
                device.engine.start()
                try await device.database.writeWithoutTransaction { db in try GameSharingRow.install(on: db) }
            }
            try await owner.engine.syncChanges()
        }

        func share(_ title: String, permission: CloudShare.Permission) async throws -> SharedRecord {
            let game = try await owner.database.read { db in try Lookup.game(db, titled: title) }
            return try await owner.engine.share(record: game) { share in
                share.title = game.title
                share.participants.removeAll { $0.user == SharingDemo.participant }
                share.participants.append(CloudShare.Participant(user: SharingDemo.participant, permission: permission))
            }
        }

        /// The sample game a share URL names.
        func gameTitle(fromShareURL url: String) throws -> String {
            guard let root = CloudShare.rootRecordID(fromURL: url), root.zone.owner == SharingDemo.owner,
                let separator = root.name.lastIndex(of: ":"), root.name[separator...] == ":games",
                let id = UUID(uuidString: String(root.name[..<separator]))
            else { throw ScorekeeperError.notASampleShare(url: url) }
            guard let title = try owner.database.read({ db in try Game.find(id).select(\.title).fetchOne(db) }) else {
                throw ScorekeeperError.notASampleShare(url: url)
            }
            return title
        }

        /// The games list with each game's sharing, from ``GameSharingRow``.
        func games(of device: DemoDevice) throws -> String {
            Rendering.sharedGames(try device.database.read { db in try GameSharingRow.all.fetchAll(db) })
        }
    }
}
