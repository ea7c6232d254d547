import ScorekeeperCore
import Testing

/// `scorekeeper share` and `scorekeeper accept`: Blob shares a sample game with Blob Jr.
@Suite(.timeLimit(.minutes(5))) struct SharingDemoTests {
    @Test func shareMarksTheGameAsSharedWithTheInvitee() async throws {
        let output = try await SharingDemo(game: "Mahjong Club").share(readOnly: true)
        #expect(output.contains("Share URL: strata-share://Blob/strata.default/00000000-0000-0000-0000-000000000009:games"))
        #expect(output.contains("  Mahjong Club              2  Shared with Blob Jr (invited)"))
        #expect(output.contains("  Solo Scrabble             1  —"))
    }

    @Test func acceptBringsTheGameToBlobJrRefusesAReadOnlyRenameAndSyncsEditsOnceAllowed() async throws {
        let output = try await SharingDemo().accept(url: nil)
        #expect(
            output.contains(
                """
                ── Blob Jr accepts: the game and its players arrive
                Games
                  Game                Players  Sharing
                  ──────────────────  ───────  ──────────────
                  Weekly Poker Night        3  Shared by Blob
                """))
        #expect(
            output.contains(
                "Refused: Blob Jr may only read Weekly Poker Night (strata_sync.writePermission: games is shared with you read-only)."))
        #expect(output.contains("  Weekly Poker Night at Blob Jr's        4  Shared with Blob Jr"))
        #expect(output.contains("  4  Blob Jr      0"))
    }

    @Test func acceptTakesTheURLSharePrinted() async throws {
        let shared = try await SharingDemo(game: "Mahjong Club").share(readOnly: false)
        let url = try #require(shared.split(separator: "\n").first { $0.hasPrefix("Share URL: ") }?.dropFirst("Share URL: ".count))
        let output = try await SharingDemo().accept(url: String(url))
        #expect(output.contains("  Mahjong Club        2  Shared by Blob"))
        await #expect(throws: ScorekeeperError.notASampleShare(url: "strata-share://Eve/strata.default/x:games")) {
            _ = try await SharingDemo().accept(url: "strata-share://Eve/strata.default/x:games")
        }
    }

    @Test func theOutputIsTheSameOnEveryRun() async throws {
        #expect(try await SharingDemo().accept(url: nil) == SharingDemo().accept(url: nil))
    }
}
