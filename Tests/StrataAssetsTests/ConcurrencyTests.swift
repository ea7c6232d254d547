import Foundation
import StrataAssets
import StrataSQLite
import StrataTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct ConcurrencyTests {
    @Test func readersWhileAWriterAddsAssets() async throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("assets.sqlite"))
        let store = try AssetStore(pool, options: AssetStorageOptions(chunkSize: 16 * 1024))
        let seeded = (0..<4).map { TestBytes.text(count: 100_000 + $0 * 7_919, seed: UInt64($0 + 1)) }
        let seededIDs = try seeded.map { try store.put($0, owner: AssetOwner(table: "seed", key: AssetID(of: $0).hexadecimal)).id }

        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                for index in 0..<20 {
                    let data = TestBytes.random(count: 30_000 + index * 1_000, seed: UInt64(100 + index))
                    let descriptor = try await store.put(data, owner: AssetOwner(table: "new", key: Int64(index)))
                    #expect(descriptor.id == AssetID(of: data))
                }
                return 20
            }
            for reader in 0..<3 {
                group.addTask {
                    var reads = 0
                    for round in 0..<10 {
                        let which = (reader + round) % seeded.count
                        if round % 2 == 0 {
                            #expect(try await store.get(seededIDs[which]) == seeded[which])
                        } else {
                            var streamed = Data()
                            for try await chunk in store.chunks(seededIDs[which]) { streamed.append(chunk) }
                            #expect(streamed == seeded[which])
                        }
                        reads += 1
                    }
                    return reads
                }
            }
            var total = 0
            for try await count in group { total += count }
            #expect(total == 50)
        }
        #expect(try store.descriptors().count == 24)
    }

    @Test func deletionWhileStreamingIsReportedAsNotFound() throws {
        let directory = try TemporaryDirectory()
        let pool = try DatabasePool(path: directory.path("assets.sqlite"))
        let store = try AssetStore(pool, options: AssetStorageOptions(chunkSize: 4096))
        let owner = AssetOwner(table: "t", key: 1)
        let id = try store.put(TestBytes.text(count: 20_000), owner: owner).id
        let reader = try store.open(id)
        #expect(try reader.next() != nil)
        try store.delete(owner: owner)
        #expect(throws: AssetError.notFound(id)) { try reader.next() }
    }
}
