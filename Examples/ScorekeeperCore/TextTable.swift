/// A plain-text table with aligned columns, for terminals.
///
/// ```
///   Game                Players  Leader
///   ──────────────────  ───────  ──────────────
///   Family Game Night         4  Blob Sr (15)
/// ```
public struct TextTable: Sendable {
    public enum Alignment: Sendable { case left, right }

    public struct Column: Sendable {
        public var title: String
        public var alignment: Alignment

        public init(_ title: String, _ alignment: Alignment = .left) {
            self.title = title
            self.alignment = alignment
        }
    }

    public var columns: [Column]
    public var rows: [[String]] = []
    /// Printed, indented, instead of an empty table.
    public var emptyMessage: String

    public init(columns: [Column], emptyMessage: String = "(none)") {
        self.columns = columns
        self.emptyMessage = emptyMessage
    }

    public mutating func append(_ row: [String]) {
        rows.append(row)
    }

    /// The table, each line indented by `indent` spaces, without a trailing newline.
    public func render(indent: Int = 2) -> String {
        let margin = String(repeating: " ", count: indent)
        guard !rows.isEmpty else { return margin + emptyMessage }
        let widths = columns.indices.map { index in
            rows.reduce(columns[index].title.count) { max($0, $1.indices.contains(index) ? $1[index].count : 0) }
        }
        func line(_ cells: [String]) -> String {
            let padded = columns.indices.map { index -> String in
                let cell = cells.indices.contains(index) ? cells[index] : ""
                let fill = String(repeating: " ", count: widths[index] - cell.count)
                return columns[index].alignment == .left ? cell + fill : fill + cell
            }
            // Trailing spaces of a left-aligned last column are noise in copied output.
            return (margin + padded.joined(separator: "  ")).trimmingTrailingSpaces()
        }
        var lines = [line(columns.map(\.title))]
        lines.append(margin + widths.map { String(repeating: "─", count: $0) }.joined(separator: "  "))
        lines += rows.map(line)
        return lines.joined(separator: "\n")
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
