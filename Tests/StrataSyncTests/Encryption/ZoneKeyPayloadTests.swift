import Crypto
import Foundation
import Testing

@testable import StrataSync

/// A zone key's retirement travels sealed with it, and vault entries name one zone each.
@Suite(.timeLimit(.minutes(1))) struct ZoneKeyPayloadTests {
    @Test func theRetirementTimeTravelsInsideTheSealAndGarbageIsRefused() throws {
        let current = ZoneKey.random(version: 3)
        let reopened = try #require(ZoneKey(version: 3, payload: current.sealedPayload))
        #expect(reopened == current)
        #expect(reopened.retiredAt == nil)
        var retired = current
        retired.retiredAt = HybridTimestamp(milliseconds: 1_700_000_000_123, counter: 7, node: "phone:1")
        #expect(try #require(ZoneKey(version: 3, payload: retired.sealedPayload)).retiredAt == retired.retiredAt)
        // A retirement that does not parse is not read as "current".
        #expect(ZoneKey(version: 3, payload: current.rawBytes + Data("soon".utf8)) == nil)
        #expect(ZoneKey(version: 3, payload: Data(count: 31)) == nil)
    }

    @Test func vaultEntriesNameExactlyOneZone() {
        let zones = [
            CloudZoneID(name: "b\u{1F}c", owner: "a"), CloudZoneID(name: "c", owner: "a\u{1F}b"),
            CloudZoneID(name: "x:y", owner: "1:2"), CloudZoneID(name: "", owner: "é"), CloudZoneID(name: "strata.default", owner: ""),
        ]
        let keys = zones.map(KeyVault.zoneKey)
        #expect(Set(keys).count == zones.count)
        for (zone, key) in zip(zones, keys) { #expect(KeyVault.zone(ofKey: key) == zone) }
        for garbage in ["", "x", "-1:a", "5:ab", "a\u{1F}b"] { #expect(KeyVault.zone(ofKey: garbage) == nil, "\(garbage)") }
    }
}

@Suite(.timeLimit(.minutes(1))) struct PassphraseNormalizationTests {
    @Test func aPassphraseOpensWhateverUnicodeFormItIsTypedIn() throws {
        let cheap = KeyWrapping.ScryptCost(rounds: 1 << 10, blockSize: 1, parallelism: 1)
        let composed = "caf\u{E9} cr\u{E8}me"
        let decomposed = "cafe\u{301} cre\u{300}me"
        #expect(Array(composed.utf8) != Array(decomposed.utf8))
        let envelope = try KeyWrapping.seal(Data([1, 2, 3]), passphrase: composed, context: "c", cost: cheap)
        #expect(KeyWrapping.open(envelope, passphrase: decomposed, context: "c") == Data([1, 2, 3]))
        #expect(KeyWrapping.open(envelope, passphrase: "cafe creme", context: "c") == nil)
    }
}
