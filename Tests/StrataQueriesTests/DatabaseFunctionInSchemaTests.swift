import Foundation
import StrataQueries
import StrataSQLite
import Testing

/// The time the schema tests' triggers stamp: a fixed clock, so the result is exact.
let fixedStamp = Date(timeIntervalSince1970: 1_800_000_000)

@DatabaseFunction
func currentStamp() -> Date { fixedStamp }

@DatabaseFunction(isDeterministic: true)
func isUrgent(priority: Int?) -> Bool { (priority ?? 0) >= 2 }

@Table struct UrgencyRow: Equatable {
    let reminderID: Int
    let title: String
    let isUrgent: Bool
}

@Suite(.timeLimit(.minutes(5))) struct DatabaseFunctionInSchemaTests {
    func install(_ db: Database) throws {
        try db.add(function: $currentStamp)
        try db.add(function: $isUrgent)
    }

    @Test func functionCalledFromAView() throws {
        let db = try makeSeedsDatabase()
        let view = UrgencyRow.createTemporaryView(
            as: Reminder.select { ($0.id, $0.title, $isUrgent(priority: $0.priority)) })
        #expect(
            view.sql == """
                CREATE TEMPORARY VIEW "urgencyRows" ("reminderID", "title", "isUrgent") AS \
                SELECT "reminders"."id", "reminders"."title", "isUrgent"("reminders"."priority") FROM "reminders"
                """)
        try db.writeWithoutTransaction { db in
            try install(db)
            try view.execute(db)
        }
        let urgent = try db.read { try UrgencyRow.where(\.isUrgent).select(\.title).fetchAll($0) }
        #expect(urgent == ["Bread", "Email"])
    }

    @Test func functionCalledFromATrigger() throws {
        let db = try makeSeedsDatabase()
        let trigger = Reminder.createTemporaryTrigger("stamp", after: .update(touch: \.updatedAt, to: $currentStamp()))
        #expect(
            trigger.sql == """
                CREATE TEMPORARY TRIGGER "stamp" AFTER UPDATE ON "reminders" FOR EACH ROW BEGIN \
                UPDATE "reminders" SET "updatedAt" = "currentStamp"() WHERE rowid = NEW.rowid; END
                """)
        try db.writeWithoutTransaction { db in
            try install(db)
            try trigger.execute(db)
            try db.execute(sql: "UPDATE reminders SET title = 'Oat milk' WHERE id = 1")
        }
        let stamps = try db.read { try Reminder.order { $0.id }.select(\.updatedAt).fetchAll($0) }
        #expect(stamps[0] == fixedStamp)
        #expect(stamps[1] == Date(timeIntervalSince1970: 946_684_800))
    }

    @Test func viewUsedWithoutTheFunctionFailsWithANamedError() throws {
        let db = try makeSeedsDatabase()
        try db.writeWithoutTransaction { db in
            try UrgencyRow.createTemporaryView(
                as: Reminder.select { ($0.id, $0.title, $isUrgent(priority: $0.priority)) }
            ).execute(db)
        }
        let error = try #require(throws: DatabaseError.self) { try db.read { try UrgencyRow.all.fetchAll($0) } }
        #expect(error.message.contains("isUrgent"))
    }
}
