import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// A counter column (`games.score`) through each cloud, sealed and in the clear: the counter's
/// state is one more field the cloud stores and returns as it is.
@Suite(.timeLimit(.minutes(5))) struct CounterThroughCloudTests {
    let clock = ManualWallClock()

    func device(_ id: String, encryption: SyncEncryption) async throws -> SyncTestDevice {
        try await SyncTestDevice(
            id, container: TestCloud.current.container(user: "alice"), time: clock, encryption: encryption,
            mergePolicies: [.counter(table: "games", column: "score")])
    }

    @Test(arguments: CloudKind.available, [true, false])
    func twoConcurrentIncrementsBothCount(_ kind: CloudKind, sealed: Bool) async throws {
        let encryption: SyncEncryption = sealed ? .endToEnd : .disabled
        try await kind.run {
            let phone = try await device("phone", encryption: encryption)
            let laptop = try await device("laptop", encryption: encryption)
            try await phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 10)")
            try await phone.engine.syncChanges()
            try await laptop.engine.syncChanges()
            try await phone.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
            try await laptop.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
            try await phone.engine.syncChanges()
            try await laptop.engine.syncChanges()
            try await phone.engine.syncChanges()
            for device in [phone, laptop] {
                #expect(try await device.rows() == ["game g1 'Poker' 12"])
                #expect(try await device.pending() == 0)
            }
        }
    }
}
