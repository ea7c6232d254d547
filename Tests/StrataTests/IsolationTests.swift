import DependenciesTestSupport
import Foundation
import Strata
import Testing

/// Every test of the suite bootstraps its own database through the trait, and they run in
/// parallel: each must see only its own row.
@Suite("Tests in parallel see isolated data", .timeLimit(.minutes(5)), .dependencies { try $0.bootstrapDatabase() })
struct IsolationTests {
    private func insertOwnRowAndCount(_ name: String) async throws {
        @Dependency(\.defaultDatabase) var database
        try await database.write { db in try Item(id: 1, name: name).insert(db) }
        // Give the other tests a chance to write before this one reads.
        await Task.yield()
        let items = try await database.read { db in try Item.fetchAll(db) }
        #expect(items == [Item(id: 1, name: name)])
    }

    @Test func first() async throws { try await insertOwnRowAndCount("first") }
    @Test func second() async throws { try await insertOwnRowAndCount("second") }
    @Test func third() async throws { try await insertOwnRowAndCount("third") }
    @Test func fourth() async throws { try await insertOwnRowAndCount("fourth") }

    @Test("fifty concurrent bootstraps, fifty databases")
    func concurrentBootstraps() async throws {
        try await withThrowingTaskGroup(of: [Item].self) { group in
            for index in 0..<50 {
                group.addTask {
                    try await withDependencies {
                        try $0.bootstrapDatabase()
                    } operation: {
                        @Dependency(\.defaultDatabase) var database
                        try await database.write { db in try Item(id: 1, name: "task \(index)").insert(db) }
                        return try await database.read { db in try Item.fetchAll(db) }
                    }
                }
            }
            var seen: Set<String> = []
            for try await items in group {
                #expect(items.count == 1)
                seen.formUnion(items.map(\.name))
            }
            #expect(seen.count == 50)
        }
    }
}
