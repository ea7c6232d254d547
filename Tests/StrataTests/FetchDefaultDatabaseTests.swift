import DependenciesTestSupport
import Foundation
import Strata
import Testing

/// A request for the `@Fetch` wrapper: the item names and the number of tags.
struct ItemOverview: FetchKeyRequest {
    func fetch(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM items ORDER BY id")
    }
}

@Table struct TypedItem: Identifiable {
    let id: Int
    var name = ""
}

@Suite("Observation wrappers on the default database", .timeLimit(.minutes(5)), .dependencies { try $0.bootstrapDatabase() })
struct FetchDefaultDatabaseTests {
    /// Waits until `values` delivers a value that satisfies `condition`.
    private func firstValue<Value: Sendable>(in values: AsyncStream<Value>, where condition: (Value) -> Bool) async -> Value? {
        for await value in values where condition(value) {
            return value
        }
        return nil
    }

    @Test("@FetchAll, @FetchOne and @Fetch read @Dependency(\\.defaultDatabase)")
    func wrappers() async throws {
        @Dependency(\.defaultDatabase) var database
        try await database.write { db in try Item(id: 1, name: "one").insert(db) }

        @FetchAll var items: [Item] = []
        @FetchAll(sql: "SELECT id, name FROM items WHERE id > ?", arguments: [.integer(1)]) var later: [Item]
        @FetchOne(sql: "SELECT count(*) FROM items") var count = 0
        @FetchOne(sql: "SELECT id, name FROM items ORDER BY id DESC LIMIT 1") var last: Item?
        @Fetch(ItemOverview()) var names: [String] = []

        #expect(items == [Item(id: 1, name: "one")])
        #expect(later.isEmpty)
        #expect(count == 1)
        #expect(last == Item(id: 1, name: "one"))
        #expect(names == ["one"])

        try await database.write { db in try Item(id: 2, name: "two").insert(db) }
        #expect(await firstValue(in: $items.values) { $0.count == 2 } != nil)
        #expect(await firstValue(in: $later.values) { $0 == [Item(id: 2, name: "two")] } != nil)
        #expect(await firstValue(in: $count.values) { $0 == 2 } != nil)
        #expect(await firstValue(in: $last.values) { $0?.id == 2 } != nil)
        #expect(await firstValue(in: $names.values) { $0 == ["one", "two"] } != nil)
    }

    @Test("query-builder statements, as SQLiteData's users write them")
    func statements() async throws {
        @Dependency(\.defaultDatabase) var database
        try await database.write { db in
            try db.execute(sql: "CREATE TABLE typedItems (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            try TypedItem.insert { TypedItem.Draft(name: "one") }.execute(db)
        }
        @FetchAll(TypedItem.order { $0.name.desc() }) var items
        @FetchOne(TypedItem.count()) var count = 0
        @FetchOne(TypedItem.order { $0.id.desc() }.limit(1)) var newest: TypedItem?
        #expect(items.map(\.name) == ["one"])
        #expect(count == 1)
        #expect(newest?.name == "one")
        try await database.write { db in try TypedItem.insert { TypedItem.Draft(name: "two") }.execute(db) }
        #expect(await firstValue(in: $items.values) { $0.map(\.name) == ["two", "one"] } != nil)
        #expect(await firstValue(in: $count.values) { $0 == 2 } != nil)
        #expect(await firstValue(in: $newest.values) { $0?.name == "two" } != nil)
    }

    @Test("interpolated SQL")
    func interpolated() async throws {
        @Dependency(\.defaultDatabase) var database
        try await database.write { db in
            try Item(id: 1, name: "one").insert(db)
            try Item(id: 2, name: "two").insert(db)
        }
        let name = "two"
        @FetchAll("SELECT id, name FROM items WHERE name = \(name)") var matches: [Item] = []
        #expect(matches == [Item(id: 2, name: "two")])
    }

    @Test("in a model, as SQLiteData's users write it")
    func model() async throws {
        @Dependency(\.defaultDatabase) var database
        try await database.write { db in try Item(id: 1, name: "one").insert(db) }
        let model = ItemsModel()
        #expect(model.items == [Item(id: 1, name: "one")])
        #expect(model.count == 1)
        #expect(model.newestFirst == [Item(id: 1, name: "one")])
        try await database.write { db in try Item(id: 2, name: "two").insert(db) }
        let items = model.$items.values
        #expect(await firstValue(in: items) { (value: [Item]) in value.count == 2 } != nil)
    }
}

/// A feature's model: no database in sight.
final class ItemsModel {
    @FetchAll var items: [Item] = []
    @FetchAll(sql: "SELECT id, name FROM items ORDER BY id DESC") var newestFirst: [Item]
    @FetchOne(sql: "SELECT count(*) FROM items") var count = 0

    // Both wrappers initialize themselves (`FetchAll.init(wrappedValue:)`, `FetchOne.init(wrappedValue:sql:)`)
    // from the default database current when the model is made.
    init() {}
}
