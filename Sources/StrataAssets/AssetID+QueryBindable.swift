import StrataQueries

/// An asset reference is a column value like any other in typed queries:
/// `Player.where { $0.avatar.eq(id) }`.
extension AssetID: QueryBindable {}
