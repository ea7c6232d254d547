import ScorekeeperCore
import Testing

/// `scorekeeper devices`: two devices edit the same game apart and converge, both devices'
/// points to one player counted.
@Suite(.timeLimit(.minutes(5))) struct DevicesTests {
    @Test func bothDevicesEndWithTheSameScoreboard() async throws {
        let output = try await DevicesDemo().run()
        #expect(output.contains("Converged: yes, the two scoreboards are identical; changes waiting: phone 0, laptop 0."))
        // The laptop renamed the game after the phone did, so its title wins; scores are
        // counters, so the points both devices gave Ada while apart (+5, +10) both count.
        let board = """
            Friday Poker — 3 players
              #  Player   Score  Avatar
              ─  ───────  ─────  ────────────────
              1  Ada        325  246 B · be095d0d
              2  Brandon    230  246 B · 77991de5
              3  Stephen    185  246 B · c8f54928
            """
        #expect(output.contains("── The phone now shows\n" + board))
        #expect(output.contains("── The laptop now shows\n" + board))
        #expect(output.contains("[laptop] │ merged │ games"))
        #expect(
            output.contains(
                "Ada had 310; +5 on the phone and +10 on the laptop while apart; now 325 on the phone and 325 on the laptop: both changes count (a score is a counter)."
            ))
    }

    @Test func theOutputIsTheSameOnEveryRun() async throws {
        #expect(try await DevicesDemo().run() == DevicesDemo().run())
    }
}
