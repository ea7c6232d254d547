import Foundation
import Strata

/// A game: a title and the players who play it.
public struct Game: TableRecord, Identifiable, Sendable, Hashable {
    public static let tableName = "games"
    public static let columnNames = ["id", "title", "createdAt"]

    public var id: UUID
    public var title: String
    public var createdAt: Date

    public init(id: UUID, title: String, createdAt: Date) {
        self.id = id
        self.title = title
        self.createdAt = createdAt
    }

    public init(row: Row) throws {
        id = try row.decode(at: 0)
        title = try row.decode(at: 1)
        createdAt = try row.decode(at: 2)
    }

    public func encodeColumns(to columns: inout ColumnEncoder) {
        columns.append(id)
        columns.append(title)
        columns.append(createdAt)
    }
}
