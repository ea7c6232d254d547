import Foundation
import ScorekeeperCore
import Testing

@Suite("Rendering", .timeLimit(.minutes(5)))
struct RenderingTests {
    @Test("columns are aligned: left text, right numbers, a rule under the header")
    func table() {
        var table = TextTable(columns: [.init("Name"), .init("Score", .right)])
        table.append(["Blob", "5"])
        table.append(["Blob Esquire", "1200"])
        #expect(
            table.render() == """
                  Name          Score
                  ────────────  ─────
                  Blob              5
                  Blob Esquire   1200
                """)
        #expect(TextTable(columns: [.init("Name")], emptyMessage: "(empty)").render() == "  (empty)")
    }

    @Test("avatars are small, valid, deterministic bitmaps")
    func avatar() {
        let image = Avatar.identicon(seed: "Blob")
        #expect(image.count == 246)
        #expect(Array(image.prefix(2)) == [0x42, 0x4D])
        #expect(image == Avatar.identicon(seed: "Blob"))
        #expect(image != Avatar.identicon(seed: "Blob Jr"))
    }
}
