import ScorekeeperCore
import Testing

/// `scorekeeper devices`: two devices edit the same game apart and converge.
@Suite(.timeLimit(.minutes(5))) struct DevicesTests {
    @Test func bothDevicesEndWithTheSameScoreboard() async throws {
        let output = try await DevicesDemo().run()
        #expect(output.contains("Converged: yes, the two scoreboards are identical; changes waiting: phone 0, laptop 0."))
        // The laptop renamed the game after the phone did, so its title wins; both score
        // changes (different players) survive.
        let board = """
            Friday Poker — 3 players
              #  Player   Score  Avatar
              ─  ───────  ─────  ────────────────
              1  Ada        315  246 B · be095d0d
              2  Brandon    240  246 B · 77991de5
              3  Stephen    185  246 B · c8f54928
            """
        #expect(output.contains("── The phone now shows\n" + board))
        #expect(output.contains("── The laptop now shows\n" + board))
        #expect(output.contains("[laptop] │ merged │ games"))
    }

    @Test func theOutputIsTheSameOnEveryRun() async throws {
        #expect(try await DevicesDemo().run() == DevicesDemo().run())
    }
}
