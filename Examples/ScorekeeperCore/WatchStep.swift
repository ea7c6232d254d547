/// One scripted change of the preview `watch`: what it says it does, and the command doing it.
public struct WatchStep: Sendable {
    public var description: String
    public var perform: @Sendable (Scorekeeper) throws -> Void

    public init(_ description: String, perform: @escaping @Sendable (Scorekeeper) throws -> Void) {
        self.description = description
        self.perform = perform
    }

    /// The changes the preview `watch` makes to the sample data, as another screen of the app
    /// would.
    public static let previewScript: [WatchStep] = [
        WatchStep("Blob Jr scores 7 points in Family Game Night") { _ = try $0.changeScore(of: "Blob Jr", by: 7) },
        WatchStep("Ada loses 120 chips at Weekly Poker Night") { _ = try $0.changeScore(of: "Ada", by: -120) },
        WatchStep("Yuki joins Mahjong Club") { _ = try $0.addPlayer("Yuki", toGame: "Mahjong Club") },
        WatchStep("Solo Scrabble becomes Scrabble Club") { _ = try $0.renameGame("Solo Scrabble", to: "Scrabble Club") },
        WatchStep("Blob Esq leaves Family Game Night") { _ = try $0.deletePlayer("Blob Esq") },
    ]
}
