import Crypto
import Foundation
import StrataTestSupport
import Testing

@testable import StrataSync

/// Key files are the owner's alone, replaced whole, and fail loudly naming their path; memory
/// and process keychains share exactly what they promise to.
@Suite(.timeLimit(.minutes(2))) struct KeyStorageTests {
    typealias F = EncryptionFixtures

    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) & 0o7777
    }

    static func entries(_ folder: TemporaryDirectory) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
    }

    @Test func aSavedFileIsTheOwnersAloneAndReplacedWhole() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.path("keys.strata-keys")
        let storage = KeyStorage.file(atPath: path)
        #expect(storage.description == path)
        #expect(try await storage.load() == nil)
        #expect(try Self.entries(folder) == [])

        try await storage.save(Data("first".utf8))
        #expect(try Self.mode(path) == 0o600)
        #expect(try await storage.load() == Data("first".utf8))
        for round in 0..<5 {
            try await storage.save(Data("round \(round)".utf8))
            #expect(try Self.mode(path) == 0o600)
            #expect(try Self.entries(folder) == ["keys.strata-keys"])
        }
        #expect(try await KeyStorage.file(atPath: path).load() == Data("round 4".utf8))
        try await storage.save(Data())
        #expect(try await storage.load() == Data())
    }

    @Test func savingOverAFileOthersCanReadLeavesItTheOwnersAlone() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.path("keys")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("old".utf8)))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        try await KeyStorage.file(atPath: path).save(Data("new".utf8))
        #expect(try Self.mode(path) == 0o600)
        #expect(try Self.entries(folder) == ["keys"])
    }

    @Test(arguments: [0o644, 0o666, 0o604, 0o640, 0o777, 0o400])
    func loadingAFileOthersCanReadTightensIt(_ mode: Int) async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.path("keys")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("keys".utf8)))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        #expect(try Self.mode(path) == mode)
        #expect(try await KeyStorage.file(atPath: path).load() == Data("keys".utf8))
        #expect(try Self.mode(path) == (mode & 0o077 == 0 ? mode : 0o600))
    }

    @Test func concurrentSavesLeaveOneWholeFileAndNoTemporaries() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.path("keys")
        let contents = (0..<16).map { F.content(4_096 + $0, seed: UInt64($0)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for data in contents {
                group.addTask { try await KeyStorage.file(atPath: path).save(data) }
            }
            try await group.waitForAll()
        }
        let loaded = try #require(try await KeyStorage.file(atPath: path).load())
        #expect(contents.contains(loaded))
        #expect(try Self.entries(folder) == ["keys"])
        #expect(try Self.mode(path) == 0o600)
    }

    @Test func aFileThatCannotBeReadNamesItsPath() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        // A directory where the file should be: unreadable as a file, even for root.
        let path = folder.path("keys")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let storage = KeyStorage.file(atPath: path)
        do {
            _ = try await storage.load()
            Issue.record("a directory loaded as a key file")
        } catch let EncryptionError.keyStorage(errorPath, reason) {
            #expect(errorPath == path)
            #expect(!reason.isEmpty)
        }
        do {
            try await storage.save(Data("keys".utf8))
            Issue.record("a key file saved over a directory")
        } catch let EncryptionError.keyStorage(errorPath, _) {
            #expect(errorPath == path)
        }
        #expect(try Self.entries(folder) == ["keys"], "a temporary file was left behind")
    }

    @Test func savingIntoAMissingFolderNamesThePath() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.path("missing/keys")
        await #expect(throws: EncryptionError.self) { try await KeyStorage.file(atPath: path).save(Data("x".utf8)) }
        do {
            try await KeyStorage.file(atPath: path).save(Data("x".utf8))
        } catch let EncryptionError.keyStorage(errorPath, _) {
            #expect(errorPath == path)
        }
        #expect(try await KeyStorage.file(atPath: path).load() == nil)
    }

    @Test(arguments: ["", "not json", "{", "[]", "null", "{\"format\":\"one\"}", "{\"identities\":{\"bob\":\"***\"}}", "\u{FEFF}\u{0}"])
    func aFileThatIsNotAVaultNamesItsPath(_ text: String) async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.path("keys")
        let storage = KeyStorage.file(atPath: path)
        try await storage.save(Data(text.utf8))
        let data = try #require(try await storage.load())
        do {
            _ = try KeyVault.decode(data, from: storage)
            Issue.record("\"\(text)\" decoded as a key vault")
        } catch let EncryptionError.keyStorage(errorPath, reason) {
            #expect(errorPath == path)
            #expect(reason.contains("not a Strata key file"))
        }
    }

    @Test func binaryGarbageIsNotAVault() throws {
        for seed in UInt64(0)..<50 {
            let data = F.content(Int(seed) * 7, seed: seed)
            #expect(throws: EncryptionError.self) { try KeyVault.decode(data, from: .inMemory()) }
        }
    }

    // MARK: Memory

    @Test func inMemoryStorageIsSharedByCopiesOnly() async throws {
        let storage = KeyStorage.inMemory()
        let copy = storage
        #expect(try await copy.load() == nil)
        try await storage.save(Data("a".utf8))
        #expect(try await copy.load() == Data("a".utf8))
        try await copy.save(Data("b".utf8))
        #expect(try await storage.load() == Data("b".utf8))
        #expect(try await KeyStorage.inMemory().load() == nil)
    }

    @Test func processKeychainsAreSharedByNameOnly() async throws {
        let name = "keychain-\(UUID().uuidString)"
        let first = KeyStorage.processKeychain(named: name)
        #expect(try await first.load() == nil)
        try await first.save(Data("shared".utf8))
        #expect(try await KeyStorage.processKeychain(named: name).load() == Data("shared".utf8))
        #expect(try await KeyStorage.processKeychain(named: name + " ").load() == nil)
        #expect(try await KeyStorage.processKeychain(named: name.uppercased()).load() == nil)
        #expect(try await KeyStorage.processKeychain(named: "other-\(UUID().uuidString)").load() == nil)
        try await KeyStorage.processKeychain(named: name).save(Data("replaced".utf8))
        #expect(try await first.load() == Data("replaced".utf8))
        #expect(first.description.contains(name))
    }

    @Test func customStorageCallsItsHooks() async throws {
        let box = KeyStorage.MemoryBox()
        let storage = KeyStorage.custom(
            named: "hooks", load: { box.data.withLock { $0 } }, save: { data in box.data.withLock { $0 = data } })
        #expect(storage.description == "hooks")
        try await storage.save(Data("x".utf8))
        #expect(box.data.withLock { $0 } == Data("x".utf8))
        #expect(try await storage.load() == Data("x".utf8))
    }
}

/// The vault round-trips through its file format, and merging keeps what each side holds.
@Suite(.timeLimit(.minutes(2))) struct KeyVaultTests {
    typealias F = EncryptionFixtures
    static let zone = F.zone
    static let otherZone = CloudZoneID(name: "strata\u{1F}default", owner: "alice\u{1F}")

    static func vault() -> KeyVault {
        var vault = KeyVault()
        vault.identities["alice"] = Curve25519.KeyAgreement.PrivateKey().rawRepresentation
        vault.identities["bób 🔑"] = Curve25519.KeyAgreement.PrivateKey().rawRepresentation
        var retired = ZoneKey.random(version: 1)
        retired.retiredAt = F.timestamp(1_700_000_000_000, counter: 3, node: "device-1")
        vault.insert(retired, of: zone)
        vault.insert(ZoneKey.random(version: 2), of: zone)
        vault.insert(ZoneKey.random(version: 1), of: otherZone)
        vault.enrollmentKey = Curve25519.KeyAgreement.PrivateKey().rawRepresentation
        return vault
    }

    @Test func encodeDecodeRoundTrips() throws {
        let vault = Self.vault()
        let decoded = try KeyVault.decode(try vault.encoded(), from: .inMemory())
        #expect(decoded == vault)
        #expect(decoded.keys(of: Self.zone) == vault.keys(of: Self.zone))
        #expect(decoded.keys(of: Self.zone).versions.count == 2)
        #expect(decoded.keys(of: Self.zone).current?.version == 2)
        #expect(decoded.keys(of: Self.zone).versions[1]?.retiredAt == F.timestamp(1_700_000_000_000, counter: 3, node: "device-1"))
        #expect(decoded.identity(of: "alice")?.publicKey.rawRepresentation == vault.identity(of: "alice")?.publicKey.rawRepresentation)
        #expect(decoded.identity(of: "nobody") == nil)
        // Encoding is stable (sorted keys).
        #expect(try vault.encoded() == decoded.encoded())
    }

    @Test func mergeKeepsItsOwnValuesWhereBothHoldOne() {
        var mine = Self.vault()
        let theirs = Self.vault()
        let before = mine
        mine.merge(theirs)
        #expect(mine.identities == before.identities)
        #expect(mine.keys(of: Self.zone) == before.keys(of: Self.zone))
        #expect(mine.enrollmentKey == before.enrollmentKey)

        var empty = KeyVault()
        empty.merge(theirs)
        #expect(empty == theirs)

        var partial = KeyVault()
        partial.insert(ZoneKey.random(version: 2), of: Self.zone)
        partial.insert(ZoneKey.random(version: 5), of: Self.zone)
        let own = partial.keys(of: Self.zone).versions
        partial.merge(theirs)
        #expect(partial.keys(of: Self.zone).versions[2] == own[2])
        #expect(partial.keys(of: Self.zone).versions[5] == own[5])
        #expect(partial.keys(of: Self.zone).versions[1] == theirs.keys(of: Self.zone).versions[1])
        #expect(partial.keys(of: Self.otherZone) == theirs.keys(of: Self.otherZone))
        #expect(partial.identities == theirs.identities)
        #expect(partial.enrollmentKey == theirs.enrollmentKey)
    }

    @Test func keysIgnoreVersionsThatAreNotNumbers() throws {
        var vault = KeyVault()
        vault.insert(ZoneKey.random(version: 3), of: Self.zone)
        let stored = try #require(vault.zoneKeys[KeyVault.zoneKey(Self.zone)]?["3"])
        for junk in ["", "x", "3.0", "three", " 3", "99999999999999999999999"] {
            vault.zoneKeys[KeyVault.zoneKey(Self.zone)]?[junk] = stored
        }
        let keys = vault.keys(of: Self.zone)
        #expect(keys.versions.keys.sorted() == [3])
        #expect(keys.current?.version == 3)
    }
}
