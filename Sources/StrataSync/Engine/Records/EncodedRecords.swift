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
    /// The texts in the order of the records they were written for, with those records' ids:
    /// applying a page finds each record's by its position, without hashing its id.
    private var ordered: [(id: CloudRecordID, texts: Texts)] = []

    init() {}

    /// The JSON of `records`, with their versions alone when `withVersions`.
    init(_ records: [CloudRecord], withVersions: Bool = true) {
        ordered.reserveCapacity(records.count)
        for record in records {
            let written: Texts
            if let arrived = record.arrivedText {
                // The JSON it arrived in reads back as the record (`ArrivedRecordText`).
                written = Texts(record: arrived.text, versions: withVersions ? arrived.versionsText : nil, changeTag: record.changeTag)
            } else {
                // Written by hand (never fails); the versions are cut from the record's text.
                let (text, versions) = record.text(withVersions: withVersions)
                written = Texts(record: text, versions: versions, changeTag: record.changeTag)
            }
            texts[record.id] = written
            ordered.append((record.id, written))
        }
    }

    /// The JSON written for `record`, the record at `index` of those the texts were written
    /// for; nil when the record there is another one.
    func texts(at index: Int, of record: CloudRecord) -> Texts? {
        guard ordered.indices.contains(index) else { return nil }
        let found = ordered[index]
        guard found.texts.changeTag == record.changeTag, found.id == record.id else { return nil }
        return found.texts
    }

    /// The JSON written for `record`, if it was: found by its id and change tag (a page may
    /// hold two copies of one record, and the engine applies records kept from earlier ones).
    subscript(_ record: CloudRecord) -> Texts? {
        guard let found = texts[record.id], found.changeTag == record.changeTag else { return nil }
        return found
    }
}
