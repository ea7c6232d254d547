import Foundation
import Strata

/// Turns query results into the text the command prints.
public enum Rendering {
    /// The games, with their number of players and leader.
    public static func games(_ games: [GameSummary]) -> String {
        var table = TextTable(
            columns: [.init("Game"), .init("Players", .right), .init("Leader")],
            emptyMessage: "No games yet. Add one with: scorekeeper add-game \"Game night\"")
        for summary in games {
            let leader = summary.leader.map { name in "\(name) (\(summary.leaderScore ?? 0))" } ?? "—"
            table.append([summary.game.title, "\(summary.playerCount)", leader])
        }
        return "Games\n" + table.render()
    }

    /// One game's players by score, with their avatar's size and content address.
    public static func players(of game: Game, _ players: [PlayerSummary]) -> String {
        var table = TextTable(
            columns: [.init("#", .right), .init("Player"), .init("Score", .right), .init("Avatar")],
            emptyMessage: "No players yet. Add one with: scorekeeper add-player \"\(game.title)\" NAME")
        for (index, row) in players.enumerated() {
            table.append(["\(index + 1)", row.player.name, "\(row.player.score)", avatar(row)])
        }
        let count = players.count == 1 ? "1 player" : "\(players.count) players"
        return "\(game.title) — \(count)\n" + table.render()
    }

    /// The games list, then every game's players.
    public static func scoreboard(_ scoreboard: Scoreboard) -> String {
        var parts = [games(scoreboard.games)]
        for section in scoreboard.sections {
            parts.append(players(of: section.summary.game, section.players))
        }
        return parts.joined(separator: "\n\n")
    }

    /// `246 B · 1f3a9c0d`: the image's size and the start of its SHA-256, which is how the
    /// asset store addresses it.
    static func avatar(_ row: PlayerSummary) -> String {
        guard let id = row.player.avatar else { return "—" }
        let size = row.avatarSize.map(byteCount) ?? "missing"
        return "\(size) · \(id.hexadecimal.prefix(8))"
    }

    static func byteCount(_ bytes: Int64) -> String {
        switch bytes {
        case ..<1024: "\(bytes) B"
        case ..<(1024 * 1024): String(format: "%.1f KiB", Double(bytes) / 1024)
        default: String(format: "%.1f MiB", Double(bytes) / (1024 * 1024))
        }
    }
}
