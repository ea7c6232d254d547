import ArgumentParser
import DependenciesTestSupport
import Foundation
import ScorekeeperCore
import Strata
import StrataTestSupport
import Testing

@testable import ScorekeeperCommands

/// The command line tried as a new user would: extreme numbers, negative options, files that
/// are not images, folders that do not exist, a cloud that does not answer (issue #24, items 8
/// and 9). Each gets a clear message, and nothing is half-written.
@Suite(
    "Scorekeeper refuses bad input plainly", .timeLimit(.minutes(1)),
    .dependencies {
        $0.uuid = .incrementing
        $0.date = .constant(Date(timeIntervalSince1970: 1_767_258_000))
    })
struct InputCheckTests {
    private func run(_ arguments: [String], on path: String) throws -> String {
        let command = try ScorekeeperCommand.parseAsRoot(arguments + ["--database", path])
        let subcommand = try #require(command as? any ScorekeeperSubcommand)
        return try live(path) { try subcommand.body(Scorekeeper()) }
    }

    private func score(of player: String, on path: String) throws -> Int? {
        try live(path) {
            @Dependency(\.defaultDatabase) var database
            return try database.read { db in try Int.fetchOne(db, sql: "SELECT score FROM players WHERE name = ?", arguments: [player]) }
        }
    }

    private func seeded() throws -> (TemporaryDirectory, String) {
        let directory = try TemporaryDirectory(prefix: "scorekeeper-input")
        let path = directory.path("scores.sqlite")
        _ = try run(["add-game", "Game night"], on: path)
        _ = try run(["add-player", "Game night", "Blob"], on: path)
        return (directory, path)
    }

    @Test func scoresThatWouldOverflowAreRefusedAndNothingChanges() throws {
        let (directory, path) = try seeded()
        defer { directory.remove() }
        _ = try run(["increment", "Blob", "--by", "5"], on: path)
        for arguments in [
            ["increment", "Blob", "--by", "9223372036854775807"],
            ["decrement", "Blob", "--by", "-9223372036854775807"],
            ["decrement", "Blob", "--by", "-9223372036854775808"],
        ] {
            #expect(throws: (any Error).self, "\(arguments)") { try run(arguments, on: path) }
            #expect(try score(of: "Blob", on: path) == 5)
        }
        do {
            _ = try run(["increment", "Blob", "--by", "9223372036854775807"], on: path)
        } catch let error as ScorekeeperError {
            #expect(error.description.contains("Blob's score is 5"))
        }
        // The largest change that fits goes through.
        #expect(try run(["increment", "Blob", "--by", "\(Int.max - 5)"], on: path).hasPrefix("Blob: +\(Int.max - 5), now \(Int.max)."))
    }

    @Test(arguments: [["--by", "-5"], ["--by=-5"]])
    func negativeAmountsAreValues(by: [String]) throws {
        let (directory, path) = try seeded()
        defer { directory.remove() }
        #expect(try run(["increment", "Blob"] + by, on: path).hasPrefix("Blob: -5, now -5."))
        #expect(try run(["decrement", "Blob"] + by, on: path).hasPrefix("Blob: +5, now 0."))
    }

    @Test func anAvatarMustBeAnImageFile() throws {
        let (directory, path) = try seeded()
        defer { directory.remove() }
        let text = directory.url.appendingPathComponent("notes.txt")
        try Data("not an image".utf8).write(to: text)
        let folder = directory.url.appendingPathComponent("pictures")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let empty = directory.url.appendingPathComponent("empty.png")
        try Data().write(to: empty)
        let cases: [(String, ScorekeeperError)] = [
            (text.path, .notAnImage(path: text.path)),
            (empty.path, .notAnImage(path: empty.path)),
            (folder.path, .unreadableAvatar(path: folder.path, reason: "it is a folder, not a file")),
            (directory.path("missing.png"), .unreadableAvatar(path: directory.path("missing.png"), reason: "no such file")),
        ]
        let assetCount = {
            try live(path) {
                @Dependency(\.defaultDatabase) var database
                return try database.read { db in try db.assetDescriptors().count }
            }
        }
        let before = try assetCount()
        for (file, expected) in cases {
            #expect(throws: expected) { try run(["set-avatar", "Blob", file], on: path) }
        }
        #expect(try assetCount() == before)
        let image = directory.url.appendingPathComponent("avatar.bmp")
        try Avatar.identicon(seed: "image").write(to: image)
        #expect(try run(["set-avatar", "Blob", image.path], on: path).hasPrefix("Set Blob's avatar"))
    }

    @Test func aDatabaseInAFolderThatDoesNotExistIsRefused() throws {
        let directory = try TemporaryDirectory(prefix: "scorekeeper-input")
        defer { directory.remove() }
        let path = directory.path("no/such/dir/x.sqlite")
        #expect(throws: (any Error).self) { try ScorekeeperCommand.parseAsRoot(["games", "--database", path]) }
        #expect(!FileManager.default.fileExists(atPath: directory.path("no")))
        let message = ScorekeeperCommand.message(for: ValidationError("x"))
        #expect(!message.isEmpty)
        do {
            _ = try ScorekeeperCommand.parseAsRoot(["games", "--database", path])
        } catch {
            #expect(ScorekeeperCommand.message(for: error).contains("does not exist"))
        }
    }

    /// A cloud that fails every request: the sync gives up with a plain message, at once.
    @Test func anUnreachableCloudIsReportedAndTheChangeStays() async throws {
        let cloud = MockCloud()
        cloud.failNextRequests(1_000, with: .networkFailure)
        let database = try DatabaseQueue()
        try await database.write { db in try db.execute(sql: "CREATE TABLE games (id TEXT PRIMARY KEY NOT NULL, title TEXT)") }
        let engine = try SyncEngine(
            for: database, tableNames: ["games"], container: cloud.container(user: "blob"),
            configuration: SyncEngineConfiguration(schedule: nil), startImmediately: false)
        try await database.write { db in try db.execute(sql: "INSERT INTO games VALUES ('g', 'Game night')") }
        let message = await CloudSync.run(engine, within: .seconds(30), cloud: "http://127.0.0.1:9", database: "scores.sqlite")
        #expect(message?.contains("Could not sync with the cloud at http://127.0.0.1:9") == true)
        #expect(message?.contains("will be sent the next time") == true)
        #expect(try await engine.pendingCount() == 1)
    }

    /// A cloud that never answers: the sync is abandoned at the deadline.
    @Test func aCloudThatNeverAnswersIsAbandonedAtTheDeadline() async throws {
        let cloud = MockCloud()
        let database = try DatabaseQueue()
        try await database.write { db in try db.execute(sql: "CREATE TABLE games (id TEXT PRIMARY KEY NOT NULL, title TEXT)") }
        let engine = try SyncEngine(
            for: database, tableNames: ["games"], container: SilentContainer(base: cloud.container(user: "blob")),
            configuration: SyncEngineConfiguration(schedule: nil), startImmediately: false)
        try await database.write { db in try db.execute(sql: "INSERT INTO games VALUES ('g', 'Game night')") }
        let message = await CloudSync.run(engine, within: .milliseconds(200), cloud: "http://127.0.0.1:9", database: "scores.sqlite")
        #expect(message?.contains("did not answer within") == true)
        #expect(try await engine.pendingCount() == 1)
    }
}

/// A container whose account check never answers (until cancelled): a cloud that is not there.
struct SilentContainer: CloudContainerWrapping {
    var wrappedContainer: any CloudContainer { base }
    let base: any CloudContainer
    var identifier: String { base.identifier }
    func accountStatus() async throws -> CloudAccountStatus {
        try await Task.sleep(for: .seconds(3_600))
        return .available
    }
    func currentUser() async throws -> String { try await base.currentUser() }
    var privateDatabase: any CloudDatabase { base.privateDatabase }
    var sharedDatabase: any CloudDatabase { base.sharedDatabase }
    func changeHints() -> AsyncStream<Void> { base.changeHints() }
    func acceptShare(url: String) async throws -> CloudShare { try await base.acceptShare(url: url) }
    func publishPublicKey(_ key: Data) async throws { try await base.publishPublicKey(key) }
    func publicKeys(of users: [String]) async throws -> [String: Data] { try await base.publicKeys(of: users) }
    func setUserProfile(_ profile: CloudUserProfile) async throws { try await base.setUserProfile(profile) }
    func userProfile() async throws -> CloudUserProfile? { try await base.userProfile() }
}
