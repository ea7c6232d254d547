import StrataQueries

/// The sync engine's metadata of one synced record, in the metadatabase: query and join it
/// after `db.attachMetadatabase()`.
///
/// ```swift
/// let unsent = try SyncMetadata.where { $0.pendingOperation.isNot(nil) }.fetchCount(db)
/// ```
@Table("metadata")
public struct SyncMetadata: Sendable, Equatable {
    /// The metadatabase's schema, ``Metadatabase/schemaName``.
    public static var schemaName: String? { Metadatabase.schemaName }

    /// The synced table.
    public var recordType: String
    /// The row's primary key, as text.
    public var recordPrimaryKey: String
    /// The record's name in the cloud: `"<primary key>:<table>"`.
    @Column(generated: .virtual)
    public var recordName: String
    /// The zone holding the record.
    public var zoneName: String
    /// The user who owns the zone.
    public var ownerName: String
    /// The table of the row the record's single foreign key points at.
    public var parentRecordType: String?
    /// The primary key of that row.
    public var parentRecordPrimaryKey: String?
    /// The record as last received from or acknowledged by the cloud: every field, including
    /// those of columns this version of the app does not have. Stored as JSON, which views and
    /// `json_extract` can read; selected, it decodes as a `CloudRecord` (opened, when
    /// end-to-end encryption is on: the metadatabase is on the device). A fetched record is
    /// kept in the JSON it arrived in, so spacing and key order differ between records: read
    /// the text as JSON, never compare it as text.
    @Column(as: JSONRepresentation<CloudRecord>?.self)
    public var lastKnownServerRecord: CloudRecord?
    /// The change tag of ``lastKnownServerRecord``: the tag the next save must carry.
    public var serverChangeTag: String?
    /// The hybrid logical clock version of each field's last edit, as a JSON object (spaced
    /// as it arrived, for a fetched record; `json_extract` reads it either way).
    public var fieldVersions: String
    /// `"save"` or `"delete"` while a local change waits to be sent; nil when in sync.
    public var pendingOperation: String?
    /// Bumped by every local change; a send clears the pending state only if it did not move.
    public var pendingRevision: Int64
    /// The local transaction of the last unsent change.
    public var pendingTransaction: Int64?
    /// The version of the last local change.
    public var userModificationTime: String?
    /// Whether the record is the root of a share.
    public var isShared: Bool
    /// The share, on a shared root: its owner, participants (name, role, permission,
    /// acceptance) and public permission, stored as JSON a view can select.
    @Column(as: JSONRepresentation<CloudShare>?.self)
    public var share: CloudShare?
    /// What the current user may do with a record another user shared with them
    /// (`"readOnly"` or `"readWrite"`); nil for the user's own records.
    public var sharePermission: String?
    /// Whether the record is the current user's own, rather than one another user shared
    /// with them.
    @Column(generated: .virtual)
    public var isOwnedByCurrentUser: Bool
}

extension SyncMetadata {
    /// Whether the cloud has acknowledged or sent this record at least once.
    public var hasLastKnownServerRecord: Bool { lastKnownServerRecord != nil }

    /// The cloud record name of the row the record's single foreign key points at:
    /// `"<primary key>:<table>"`, as ``recordName`` spells its own.
    public var parentRecordName: String? {
        guard let parentRecordType, let parentRecordPrimaryKey else { return nil }
        return "\(parentRecordPrimaryKey):\(parentRecordType)"
    }
}

extension SyncMetadata.TableColumns {
    /// ``SyncMetadata/hasLastKnownServerRecord`` in SQL.
    public var hasLastKnownServerRecord: some QueryExpression<Bool> {
        SQLQueryExpression<Bool>("(\(lastKnownServerRecord) IS NOT NULL)")
    }

    /// ``SyncMetadata/parentRecordName`` in SQL: NULL for a record without a parent.
    public var parentRecordName: some QueryExpression<String?> {
        SQLQueryExpression<String?>("(\(parentRecordPrimaryKey) || ':' || \(parentRecordType))")
    }
}
