import StrataSQLite

extension CloudValue {
    /// The cloud form of a column value.
    init(_ value: DatabaseValue) {
        switch value {
        case .null: self = .null
        case .integer(let integer): self = .integer(integer)
        case .real(let real): self = .real(real)
        case .text(let text): self = .text(text)
        case .blob(let data): self = .bytes(data)
        }
    }

    /// The column value of a cloud field; an asset reference is stored as its hash (the
    /// StrataAssets `AssetID` text form).
    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let integer): .integer(integer)
        case .real(let real): .real(real)
        case .text(let text): .text(text)
        case .bytes(let data): .blob(data)
        case .asset(let reference): .text(reference.hash)
        }
    }
}
