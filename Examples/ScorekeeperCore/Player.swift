import Foundation
import Strata

/// A player of one game, with a score and an optional avatar image (an asset).
public struct Player: TableRecord, Identifiable, Sendable, Hashable {
    public static let tableName = "players"
    public static let columnNames = ["id", "gameID", "name", "score", "avatar", "createdAt"]

    public var id: UUID
    public var gameID: Game.ID
    public var name: String
    public var score: Int
    /// The avatar's content address in the asset store; the players table tracks the column,
    /// so deleting the player (or its game) releases the image.
    public var avatar: AssetID?
    public var createdAt: Date

    public init(id: UUID, gameID: Game.ID, name: String, score: Int = 0, avatar: AssetID? = nil, createdAt: Date) {
        self.id = id
        self.gameID = gameID
        self.name = name
        self.score = score
        self.avatar = avatar
        self.createdAt = createdAt
    }

    public init(row: Row) throws {
        id = try row.decode(at: 0)
        gameID = try row.decode(at: 1)
        name = try row.decode(at: 2)
        score = try row.decode(at: 3)
        avatar = try row.decode(at: 4)
        createdAt = try row.decode(at: 5)
    }

    public func encodeColumns(to columns: inout ColumnEncoder) {
        columns.append(id)
        columns.append(gameID)
        columns.append(name)
        columns.append(score)
        columns.append(avatar)
        columns.append(createdAt)
    }
}
