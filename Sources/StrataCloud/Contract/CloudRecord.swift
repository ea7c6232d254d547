/// A record as the cloud stores it: typed fields, a version per field, an optional parent and
/// the server's change tag.
///
/// It is a value: a cloud keeps its own copy, and nothing a caller does to a record it sent or
/// received changes what the cloud holds.
public struct CloudRecord: Hashable, Sendable, Codable {
    /// The record's name and zone.
    public var id: CloudRecordID { didSet { arrivedText = nil } }
    /// The record's type; StrataSync uses the table name.
    public var type: String { didSet { arrivedText = nil } }
    /// The field values by column name.
    public var fields: [String: CloudValue] { didSet { arrivedText = nil } }
    /// The version of each field's last edit, by column name. The per-field merge compares
    /// these (see `Documentation/Sync.md`).
    public var fieldVersions: [String: HybridTimestamp] { didSet { arrivedText = nil } }
    /// The record this one belongs to (the row its single foreign key points at), which must
    /// exist in the same zone. Sharing a record shares its descendants through these.
    public var parent: CloudRecordID? { didSet { arrivedText = nil } }
    /// The tag the server gave the record's last save; nil for a record never saved. A save must
    /// carry the tag the server holds, or it fails with ``CloudError/serverRecordChanged(_:)``.
    public var changeTag: String? { didSet { arrivedText = nil } }

    /// The JSON the record was read from, when a client read it from a page of the wire
    /// (``ArrivedRecordText``); nil for a record made or changed in memory. Any change to the
    /// record forgets it, so it always reads back as this record. Not part of the record's
    /// value: left out of `==`, hashing and `Codable`.
    package var arrivedText: ArrivedRecordText?

    /// A record; a new one has no change tag.
    public init(
        id: CloudRecordID,
        type: String,
        fields: [String: CloudValue] = [:],
        fieldVersions: [String: HybridTimestamp] = [:],
        parent: CloudRecordID? = nil,
        changeTag: String? = nil
    ) {
        self.id = id
        self.type = type
        self.fields = fields
        self.fieldVersions = fieldVersions
        self.parent = parent
        self.changeTag = changeTag
    }

    private enum CodingKeys: String, CodingKey {
        case id, type, fields, fieldVersions, parent, changeTag
    }

    public static func == (lhs: CloudRecord, rhs: CloudRecord) -> Bool {
        lhs.id == rhs.id && lhs.type == rhs.type && lhs.fields == rhs.fields && lhs.fieldVersions == rhs.fieldVersions
            && lhs.parent == rhs.parent && lhs.changeTag == rhs.changeTag
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(type)
        hasher.combine(fields)
        hasher.combine(fieldVersions)
        hasher.combine(parent)
        hasher.combine(changeTag)
    }

    /// The bytes the record counts for against a request's byte limit.
    package var encodedSize: Int {
        var size = id.name.utf8.count + type.utf8.count
        for (name, value) in fields { size += name.utf8.count + value.encodedSize }
        size += fieldVersions.count * 24
        return size
    }
}
