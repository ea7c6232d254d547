/// A record's JSON exactly as it arrived in a page, with where its field versions and fields
/// are in it.
///
/// A device keeps every record it fetches as JSON in its metadatabase (the last known server
/// record, and the field versions alone). Writing that JSON again from the parsed record was
/// about a tenth of a first sync's download; the page's own bytes, already read and checked,
/// say the same. It travels in the record (``CloudRecord/arrivedText``), which forgets it on
/// any change, so the text always reads back as the record that carries it.
package struct ArrivedRecordText: Sendable {
    /// The record's JSON object: it reads back as the record that carries it.
    package let text: String
    /// Where the field versions' object is in ``text``, in UTF-8 bytes.
    package let versions: Range<Int>
    /// Where the fields' object is in ``text``, in UTF-8 bytes (after opening a sealed record,
    /// with any whitespace the opened text had around it).
    package let fields: Range<Int>

    package init(text: String, versions: Range<Int>, fields: Range<Int>) {
        self.text = text
        self.versions = versions
        self.fields = fields
    }

    /// The field versions' JSON object.
    package var versionsText: String {
        var text = text
        return text.withUTF8 { String(decoding: UnsafeBufferPointer(rebasing: $0[versions]), as: UTF8.self) }
    }

    /// The same record with `fieldsText`, a JSON object, in place of its fields: what opening
    /// a sealed record makes of it, whose fields arrived inside one envelope.
    package func replacingFields(with fieldsText: String) -> ArrivedRecordText {
        var whole = text
        var fieldsText = fieldsText
        let spliced = whole.withUTF8 { record in
            fieldsText.withUTF8 { opened in
                var bytes: [UInt8] = []
                bytes.reserveCapacity(record.count - fields.count + opened.count)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: record[..<fields.lowerBound]))
                bytes.append(contentsOf: opened)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: record[fields.upperBound...]))
                return String(decoding: bytes, as: UTF8.self)
            }
        }
        let newFields = fields.lowerBound..<(fields.lowerBound + fieldsText.utf8.count)
        // A wire text may hold its keys in any order: versions after the fields move with them.
        let shift = newFields.count - fields.count
        let newVersions =
            versions.lowerBound >= fields.upperBound ? (versions.lowerBound + shift)..<(versions.upperBound + shift) : versions
        return ArrivedRecordText(text: spliced, versions: newVersions, fields: newFields)
    }
}
