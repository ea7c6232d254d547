import Foundation
import Strata

/// A game: a title and the players who play it.
@Table("games")
public struct Game: Identifiable, Sendable, Hashable {
    public var id: UUID
    public var title: String
    public var createdAt: Date

    public init(id: UUID, title: String, createdAt: Date) {
        self.id = id
        self.title = title
        self.createdAt = createdAt
    }
}

extension Game {
    /// The game called `title`, ignoring case as the unique index `games_title` does.
    static func titled(_ title: String) -> Select<Game, Game, ()> {
        Game.where { $0.title.collate("NOCASE").eq(title) }
    }

    /// Every game, by title (ignoring case).
    static var byTitle: Select<Game, Game, ()> {
        Game.order { $0.title.collate("NOCASE") }
    }
}
