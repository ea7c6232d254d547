import ScorekeeperCommands

/// The `scorekeeper` executable's entry point; the commands live in ScorekeeperCommands.
@main
enum Main {
    static func main() async {
        await ScorekeeperCommand.main()
    }
}
