/// The `init(decoder:)` that `@Table` and `@Selection` generate: one read per column, in
/// order, through the column's representation when it has one.
func decoderInitSource(access: String, columns: [ColumnProperty], readMethod: String) -> String {
    var lines: [String] = []
    lines.append("\(access)init(decoder: inout StrataQueries.QueryDecoder) throws {")
    for column in columns {
        if let representation = column.representation {
            lines.append("    self.\(column.identifier) = try decoder.decode(as: \(representation.expression).self)")
        } else {
            lines.append("    self.\(column.identifier) = try decoder.\(readMethod)(\(column.type.expression).self)")
        }
    }
    lines.append("}")
    return lines.joined(separator: "\n")
}
