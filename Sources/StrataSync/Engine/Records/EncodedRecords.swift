/// The metadatabase's JSON of records, written before the transaction that stores them.
///
/// The engine's writes all run on one connection, one after another, and a first sync waits on
/// it: encoding each record for its metadata there (its last known server record, and its
/// field versions) was a fifth of applying a page. The records of a fetched page, and the
/// records the cloud accepted, are known before that transaction opens, so their JSON is
/// written on another thread meanwhile (while the page before is applied, or the next batch
/// is built) and the transaction only binds it.
struct EncodedRecords: Sendable {
    /// One record's JSON: the record, and its field versions alone.
    struct Texts: Sendable {
        let record: String
        /// The versions alone: written for fetched records, whose metadata stores them; nil
        /// for accepted saves, whose answer leaves the stored versions as they are.
        let versions: String?
        /// The change tag of the record encoded: two copies of one record never share one.
        let changeTag: String?
    }

    private var texts: [CloudRecordID: Texts] = [:]

    init() {}

    /// The JSON of `records`, with their versions alone when `withVersions`; a record that
    /// does not encode is left out (it is encoded again, with its error, where it is stored).
    init(_ records: some Sequence<CloudRecord>, withVersions: Bool = true) {
        for record in records {
            guard let text = try? SyncJSON.encode(record) else { continue }
            texts[record.id] = Texts(
                record: text, versions: withVersions ? SyncJSON.encode(record.fieldVersions) : nil, changeTag: record.changeTag)
        }
    }

    /// The JSON written for `record`, if it was: found by its id and change tag (a page may
    /// hold two copies of one record, and the engine applies records kept from earlier ones).
    subscript(_ record: CloudRecord) -> Texts? {
        guard let found = texts[record.id], found.changeTag == record.changeTag else { return nil }
        return found
    }
}
