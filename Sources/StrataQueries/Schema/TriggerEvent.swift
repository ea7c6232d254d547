import StrataSQLite

/// What fires a trigger: `.insert`, `.update`, `.update { ($0.title, $0.score) }` (only when
/// those columns are assigned) or `.delete`.
public struct TriggerEvent<On: Table>: Sendable {
    let keyword: String
    let columns: [String]

    /// After a row is inserted.
    public static var insert: Self { Self(keyword: "INSERT", columns: []) }
    /// After a row is updated.
    public static var update: Self { Self(keyword: "UPDATE", columns: []) }
    /// After a row is deleted.
    public static var delete: Self { Self(keyword: "DELETE", columns: []) }

    /// After an `UPDATE` that assigns one of the columns: `UPDATE OF "title", "score"`.
    public static func update<each Column>(
        of columns: (On.TableColumns) -> (repeat TableColumn<On, each Column>)
    ) -> Self {
        var names: [String] = []
        for column in repeat each columns(On.columns) {
            names.append(column.name)
        }
        return Self(keyword: "UPDATE", columns: names)
    }

    var clause: String {
        columns.isEmpty ? keyword : keyword + " OF " + columns.map(\.quotedIdentifier).joined(separator: ", ")
    }
}
