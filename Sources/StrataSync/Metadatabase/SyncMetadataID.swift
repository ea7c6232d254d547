import StrataQueries
import StrataSQLite

extension SyncMetadata {
    /// What identifies the metadata of one synced row: its table and its primary key as text,
    /// the form the engine stores keys in.
    public struct ID: Hashable, Sendable, CustomStringConvertible {
        /// The synced table.
        public var recordType: String
        /// The row's primary key, as text.
        public var recordPrimaryKey: String

        /// The metadata id of the row of `recordType` with this key.
        public init(recordType: String, recordPrimaryKey: String) {
            self.recordType = recordType
            self.recordPrimaryKey = recordPrimaryKey
        }

        /// The cloud record name, `"<primary key>:<table>"`.
        public var description: String { "\(recordPrimaryKey):\(recordType)" }
    }

    /// This metadata's id.
    public var id: ID { ID(recordType: recordType, recordPrimaryKey: recordPrimaryKey) }

    /// The metadata of one row:
    ///
    /// ```swift
    /// let metadata = try SyncMetadata.find(game.syncMetadataID).fetchOne(db)
    /// ```
    public static func find(_ id: ID) -> Select<SyncMetadata, SyncMetadata, ()> {
        all.where { $0.recordType.eq(id.recordType) && $0.recordPrimaryKey.eq(id.recordPrimaryKey) }
    }
}

extension SyncMetadata.TableColumns {
    /// The columns that identify a row's metadata, to join with a synced table's
    /// `PrimaryKeyedTableDefinition.syncMetadataID`.
    public var id: SyncMetadataIDColumns {
        SyncMetadataIDColumns(recordType: recordType.queryFragment, recordPrimaryKey: recordPrimaryKey.queryFragment)
    }
}

extension NullableColumns where Base == SyncMetadata {
    /// The metadata id columns of a left-joined ``SyncMetadata``:
    /// `Game.leftJoin(SyncMetadata.all) { $0.syncMetadataID.eq($1.id) }`.
    public var id: SyncMetadataIDColumns { SyncMetadata.columns.id }
}

extension PrimaryKeyedTableDefinition {
    /// The id of the rows' sync metadata, for joins:
    ///
    /// ```swift
    /// Game.leftJoin(SyncMetadata.all) { $0.syncMetadataID.eq($1.id) }
    /// ```
    public var syncMetadataID: SyncMetadataIDColumns {
        SyncMetadataIDColumns(
            recordType: QueryFragment(binding: .text(QueryValue.tableName)),
            recordPrimaryKey: "CAST(\(primaryKey) AS TEXT)")
    }
}

extension PrimaryKeyedTable {
    /// The id of this row's sync metadata, as SQLiteData's users write it:
    ///
    /// ```swift
    /// let share = try SyncMetadata.find(game.syncMetadataID).fetchOne(db)?.share
    /// ```
    ///
    /// The key is encoded as the row stores it (a `UUID` as lowercase text). A row whose
    /// columns cannot be encoded at all (a custom representation that throws) gets an id no
    /// metadata has, so `find` returns nothing; ``SyncEngine/share(record:)`` and friends throw
    /// the encoding error instead.
    public var syncMetadataID: SyncMetadata.ID {
        do {
            return try encodedSyncMetadataID()
        } catch {
            return SyncMetadata.ID(recordType: Self.tableName, recordPrimaryKey: "\u{0}unencodable row: \(error)")
        }
    }

    /// ``syncMetadataID``, throwing what encoding the row throws.
    package func encodedSyncMetadataID() throws -> SyncMetadata.ID {
        let values = try databaseValues()
        let keyColumn = Self.columns.primaryKey.name
        guard let index = Self.columnNames.firstIndex(of: keyColumn) else {
            throw SyncSchemaError.primaryKeyNotSingleColumn(table: Self.tableName, columns: [keyColumn])
        }
        return SyncMetadata.ID(recordType: Self.tableName, recordPrimaryKey: CloudValue(values[index]).keyText)
    }
}

/// A row's metadata id as SQL: a table name and a primary key as text. Compare two with
/// ``eq(_:)``.
public struct SyncMetadataIDColumns: Sendable {
    let recordType: QueryFragment
    let recordPrimaryKey: QueryFragment

    /// Both parts equal.
    public func eq(_ other: SyncMetadataIDColumns) -> some QueryExpression<Bool> {
        SQLQueryExpression<Bool>("(\(recordType) = \(other.recordType) AND \(recordPrimaryKey) = \(other.recordPrimaryKey))")
    }
}
