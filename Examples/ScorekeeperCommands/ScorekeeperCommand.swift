import ArgumentParser
import ScorekeeperCore

/// `scorekeeper`: the command-line face of the Scorekeeper example.
public struct ScorekeeperCommand: AsyncParsableCommand {
    public init() {}

    /// Computed, so that `scorekeeper-live` names itself in usage lines.
    public static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: executableName,
            abstract: "Keep score of games and their players, stored in SQLite with Strata.",
            discussion: """
                Without --database, Scorekeeper runs in preview mode: every run starts from a \
                seeded in-memory database (four games with players, scores and avatars), and \
                changes last until the program exits. With --database PATH it runs live on that \
                file, created on first use, and keeps its data between runs.

                Try it:
                  scorekeeper                     # the sample games and players
                  scorekeeper watch               # scripted changes, reprinted live
                  scorekeeper players "Mahjong Club"
                  scorekeeper devices             # two devices syncing the same game
                  scorekeeper share "Mahjong Club" # Blob shares a game with Blob Jr
                  scorekeeper accept              # Blob Jr's side of a share

                Keep your own scores in a file:
                  scorekeeper add-game "Game night" --database scores.sqlite
                  scorekeeper add-player "Game night" Blob --database scores.sqlite
                  scorekeeper increment Blob --by 3 --database scores.sqlite
                  scorekeeper watch --database scores.sqlite

                Sync a file through a strata-cloud service with scorekeeper-live: the same \
                commands, plus --cloud URL (it links the live cloud's client, which scorekeeper \
                leaves out to build fast).
                """,
            subcommands: [
                Show.self, Games.self, Players.self,
                AddGame.self, RenameGame.self, DeleteGame.self,
                AddPlayer.self, RenamePlayer.self, DeletePlayer.self,
                Increment.self, Decrement.self, SetAvatar.self,
                WatchCommand.self, DevicesCommand.self, ShareCommand.self, AcceptCommand.self,
            ],
            defaultSubcommand: Show.self
        )
    }
}
