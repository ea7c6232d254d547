/// Who holds a reference to an asset: a row of a table, and a name for the slot within that row
/// (usually the column's name), so one row can hold several assets.
///
/// An owner refers to at most one asset at a time; giving it another one releases the first.
public struct AssetOwner: Hashable, Sendable, CustomStringConvertible {
    /// The owner's table (any name: the store does not require the table to exist).
    public var table: String
    /// The owner row's key, as text (integer keys are written in decimal).
    public var key: String
    /// The slot within the row, such as a column name; empty by default.
    public var name: String

    public init(table: String, key: String, name: String = "") {
        self.table = table
        self.key = key
        self.name = name
    }

    /// An owner whose row has an integer key, such as an `INTEGER PRIMARY KEY` id.
    public init(table: String, key: Int64, name: String = "") {
        self.init(table: table, key: String(key), name: name)
    }

    public var description: String {
        name.isEmpty ? "\(table)[\(key)]" : "\(table)[\(key)].\(name)"
    }
}

/// One owner's reference to one asset.
public struct AssetReference: Hashable, Sendable {
    public var asset: AssetID
    public var owner: AssetOwner
}
