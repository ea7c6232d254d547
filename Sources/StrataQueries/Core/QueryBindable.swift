import Foundation
import StrataSQLite

/// A Swift value stored in one column: it binds, decodes, and is an expression of itself.
///
/// The standard column types conform. Conform your own single-column types, for example an
/// enum with a raw value:
///
/// ```swift
/// enum Priority: Int, QueryBindable { case low, medium, high }
/// ```
///
/// Because a bindable value is an expression, a literal works wherever an expression of its
/// type does: `$0.score.eq(10)`, `$0.title.like("%chess%")`.
public protocol QueryBindable: DatabaseValueConvertible, QueryDecodable, QueryExpression where QueryValue == Self {}

extension QueryBindable {
    public var queryFragment: QueryFragment { QueryFragment(binding: databaseValue) }
}

extension Bool: QueryBindable {}
extension Int: QueryBindable {}
extension Int64: QueryBindable {}
extension Int32: QueryBindable {}
extension Int16: QueryBindable {}
extension Int8: QueryBindable {}
extension UInt32: QueryBindable {}
extension UInt16: QueryBindable {}
extension UInt8: QueryBindable {}
extension Double: QueryBindable {}
extension Float: QueryBindable {}
extension String: QueryBindable {}
extension Data: QueryBindable {}
extension UUID: QueryBindable {}
extension Date: QueryBindable {}
extension DatabaseValue: QueryBindable {}
extension Optional: QueryExpression, QueryBindable where Wrapped: QueryBindable {
    public typealias QueryValue = Self
}
