import Crypto
import Foundation
import Testing

@testable import StrataSync

/// A share URL's fragment carries the link key; anything malformed there opens nothing and
/// never damages the address.
@Suite(.timeLimit(.minutes(2))) struct LinkKeyTests {
    typealias F = EncryptionFixtures
    static let address = "strata-share://alice/strata.default/row-1"

    @Test func textAndSplitRoundTrip() throws {
        for version in [0, 1, 2, 99, Int(Int32.max), Int.max] {
            for seed in UInt64(0)..<20 {
                let bytes = F.content(32, seed: seed)
                let link = LinkKey(version: version, secret: SymmetricKey(data: bytes))
                #expect(!link.text.contains("+") && !link.text.contains("/") && !link.text.contains("="))
                #expect(link.text.hasPrefix("\(version)."))
                let (address, parsed) = LinkKey.split(Self.address + "#k=" + link.text)
                #expect(address == Self.address)
                #expect(parsed?.version == version)
                #expect(parsed.map { $0.secret.withUnsafeBytes { Data($0) } } == bytes)
            }
        }
        // Bytes that base64 writes with "+" and "/".
        let awkward = Data(repeating: 0xFB, count: 16) + Data(repeating: 0xFF, count: 16)
        let link = LinkKey(version: 4, secret: SymmetricKey(data: awkward))
        #expect(link.text.contains("-") || link.text.contains("_"))
        #expect(LinkKey.split("x#k=" + link.text).link.map { $0.secret.withUnsafeBytes { Data($0) } } == awkward)
    }

    @Test(arguments: [
        "", "#", "#k=", "#k=1", "#k=1.", "#k=.AAAA", "#other", "#k", "#K=1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "#x=1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        // Malformed base64, or a secret of another length than 32 bytes.
        "#k=1.!!!!", "#k=1.AAAA", "#k=1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "#k=1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "#k=1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.",
        "#k=1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA*",
        "#k=1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA AAAAAAAA",
        // Versions that are not a number.
        "#k=x.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "#k=1x.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "#k= 1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "#k=99999999999999999999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ])
    func malformedFragmentsOpenNothing(_ fragment: String) {
        let (address, link) = LinkKey.split(Self.address + fragment)
        #expect(address == Self.address)
        #expect(link == nil)
    }

    /// Versions are key versions: never below 0.
    @Test(arguments: ["#k=-1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "#k=-0.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"])
    func negativeVersionsOpenNothing(_ fragment: String) {
        let (address, link) = LinkKey.split(Self.address + fragment)
        #expect(address == Self.address)
        #expect(link == nil)
    }

    @Test func aWellFormedFragmentOfZerosParses() {
        let (address, link) = LinkKey.split(Self.address + "#k=7.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
        #expect(address == Self.address)
        #expect(link?.version == 7)
        #expect(link.map { $0.secret.withUnsafeBytes { Data($0) } } == Data(count: 32))
    }

    @Test func onlyTheFirstHashSplits() {
        let link = LinkKey(version: 1, secret: SymmetricKey(data: F.content(32)))
        let (address, parsed) = LinkKey.split(Self.address + "#k=" + link.text + "#more")
        #expect(address == Self.address)
        #expect(parsed == nil)
        #expect(LinkKey.split("#k=" + link.text).address == "")
        #expect(LinkKey.split("#k=" + link.text).link?.version == 1)
        #expect(LinkKey.split("").address == "")
    }

    @Test func theCloudIgnoresTheFragment() {
        let link = LinkKey(version: 2, secret: SymmetricKey(data: F.content(32)))
        let expected = CloudRecordID(name: "row-1", zone: CloudZoneID(name: "strata.default", owner: "alice"))
        #expect(CloudShare.rootRecordID(fromURL: Self.address) == expected)
        for fragment in ["#k=" + link.text, "#", "#garbage/with/slashes", "#k=1.!!!!#x"] {
            #expect(CloudShare.rootRecordID(fromURL: Self.address + fragment) == expected, "\(fragment)")
        }
        #expect(CloudShare.rootRecordID(fromURL: "strata-share://alice/strata.default#k=" + link.text) == nil)
    }
}
