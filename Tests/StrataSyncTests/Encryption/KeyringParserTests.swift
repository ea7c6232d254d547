import Foundation
import Testing

@testable import StrataSync

/// The names a keyring reads back from the cloud: a share's wrapped-key entries and a user's
/// zone-key records. The cloud chose them, so anything may arrive: never a trap.
@Suite(.timeLimit(.minutes(2))) struct KeyringParserTests {
    typealias F = EncryptionFixtures

    @Test func shareEntries() throws {
        let timestamp = F.timestamp(1_700_000_000_123, counter: 4, node: "device:1")
        let entry = try #require(Keyring.shareEntry("1:bob"))
        #expect(entry.0 == 1 && entry.1 == "bob" && entry.2 == nil)
        let link = try #require(Keyring.shareEntry("1:"))
        #expect(link.0 == 1 && link.1 == "" && link.2 == nil)
        let retiredLink = try #require(Keyring.shareEntry("2::\(timestamp)"))
        #expect(retiredLink.0 == 2 && retiredLink.1 == "" && retiredLink.2 == timestamp)
        let retired = try #require(Keyring.shareEntry("3:bob:\(timestamp)"))
        #expect(retired.0 == 3 && retired.1 == "bob" && retired.2 == timestamp)
        let unicode = try #require(Keyring.shareEntry("12:bób 🔑:\(timestamp)"))
        #expect(unicode.0 == 12 && unicode.1 == "bób 🔑" && unicode.2 == timestamp)
    }

    /// What the owner writes (``Keyring/sealKeys(into:)``'s names) parses back.
    @Test func theNamesOwnersWriteParseBack() throws {
        let timestamp = F.timestamp(-5, counter: 0, node: "n")
        for (version, recipient, retiredAt) in [(1, "", nil), (2, "", timestamp), (7, "carol", nil), (8, "carol", timestamp)] {
            let name =
                recipient.isEmpty
                ? "\(version):" + (retiredAt.map { ":\($0)" } ?? "")
                : "\(version):\(recipient)" + (retiredAt.map { ":\($0)" } ?? "")
            let parsed = try #require(Keyring.shareEntry(name), "\(name)")
            #expect(parsed.0 == version && parsed.1 == recipient && parsed.2 == retiredAt, "\(name)")
        }
    }

    @Test(arguments: [
        "", ":", "bob", "1", "x:bob", ":bob", "1.5:bob", "one:bob", " 1:bob", "1 :bob", "99999999999999999999:bob", "-1:bob", "-1:",
    ])
    func shareEntriesThatAreNotEntries(_ name: String) {
        #expect(Keyring.shareEntry(name) == nil, "\(name)")
    }

    @Test func zoneKeyNames() throws {
        let plain = try #require(Keyring.zoneKeyName("zone.strata.default.3", user: "alice"))
        #expect(plain.0 == CloudZoneID(name: "strata.default", owner: "alice") && plain.1 == 3)
        let dotted = try #require(Keyring.zoneKeyName("zone.a.b.c.d.12", user: "bob"))
        #expect(dotted.0 == CloudZoneID(name: "a.b.c.d", owner: "bob") && dotted.1 == 12)
        let single = try #require(Keyring.zoneKeyName("zone.x.0", user: "bob"))
        #expect(single.0 == CloudZoneID(name: "x", owner: "bob") && single.1 == 0)
        let trailingDot = try #require(Keyring.zoneKeyName("zone.x..1", user: "bob"))
        #expect(trailingDot.0 == CloudZoneID(name: "x.", owner: "bob") && trailingDot.1 == 1)
        let leadingDot = try #require(Keyring.zoneKeyName("zone..x.1", user: "bob"))
        #expect(leadingDot.0 == CloudZoneID(name: ".x", owner: "bob") && leadingDot.1 == 1)
        let unicode = try #require(Keyring.zoneKeyName("zone.ünï 🔑.4", user: "bob"))
        #expect(unicode.0.name == "ünï 🔑" && unicode.1 == 4)
    }

    /// Record names of the key zone that name no zone key: nil, never a trap (a record named
    /// "zone.3" once crashed the engine with a reversed range).
    @Test(arguments: [
        "", "zone", "zone.", "zone..", "zone..1", "zone.1", "zone.3", "zone.12345", "zone.strata.default",
        "zone.strata.default.", "zone.strata.default.x", "zone.strata.default.1.5x", "zone.x.-1",
        "zone.x.99999999999999999999", "Zone.x.1", "zonex.1", "zones.x.1", "identity.alice", ".x.1", "zone.x. 1",
    ])
    func zoneKeyNamesThatNameNoKey(_ name: String) {
        #expect(Keyring.zoneKeyName(name, user: "alice") == nil, "\(name)")
    }
}
