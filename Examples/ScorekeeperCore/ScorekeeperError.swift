/// What a Scorekeeper command can get wrong, worded for the person who typed it.
public enum ScorekeeperError: Error, Sendable, Equatable, CustomStringConvertible {
    case noSuchGame(String, known: [String])
    case noSuchPlayer(String, game: String?)
    case ambiguousPlayer(String, games: [String])
    case duplicateGame(String)
    case duplicatePlayer(String, game: String)
    case emptyName
    case unreadableAvatar(path: String, reason: String)
    case notASampleShare(url: String)
    case scoreOutOfRange(player: String, score: Int, change: Int)
    case notAnImage(path: String)
    case notAShareURL(String)

    public var description: String {
        switch self {
        case .noSuchGame(let title, let known):
            let hint = known.isEmpty ? "There are no games yet." : "Games: " + known.map { "\"\($0)\"" }.joined(separator: ", ") + "."
            return "No game is called \"\(title)\". \(hint)"
        case .noSuchPlayer(let name, let game?):
            return "No player called \"\(name)\" plays \(game)."
        case .noSuchPlayer(let name, nil):
            return "No player is called \"\(name)\"."
        case .ambiguousPlayer(let name, let games):
            return "\"\(name)\" plays in several games (\(games.joined(separator: ", "))). Say which with --game."
        case .duplicateGame(let title):
            return "A game called \"\(title)\" exists already."
        case .duplicatePlayer(let name, let game):
            return "\(game) has a player called \"\(name)\" already."
        case .emptyName:
            return "Names cannot be empty."
        case .unreadableAvatar(let path, let reason):
            return "Could not read the image at \(path): \(reason)"
        case .scoreOutOfRange(let player, let score, let change):
            return
                "\(player)'s score is \(score): changing it by \(change) would leave the range a score can hold (\(Int.min) to \(Int.max)). Nothing was changed."
        case .notAnImage(let path):
            return "\(path) is not an image (PNG, JPEG, GIF, BMP or WebP). Nothing was changed."
        case .notAShareURL(let url):
            return "\(url) is not a share URL: `scorekeeper-live share GAME --with USER` prints one (strata-share://…)."
        case .notASampleShare(let url):
            return "\(url) is not a share of one of the preview's sample games. `scorekeeper share GAME` prints one."
        }
    }
}
