import Foundation

extension KeyedDecodingContainer {
    /// A whole number under `key`, and when the JSON holds another number there (`2.5`,
    /// `1e30`, `1e-400`), an error that names the key: Foundation's `JSONDecoder` on Linux
    /// reports such a number for an `Int` as "The given data was not valid JSON." at no path,
    /// so a service would blame the whole body, which is valid JSON.
    ///
    /// Whole numbers written as reals (`2.0`, `20e-1`) are read, as `JSONDecoder` reads them.
    /// What it reads for an integer goes through a `Double`, though, which makes some numbers
    /// that are not whole look whole: `1e-400` underflows to 0, and `2.0000000000000001` or
    /// `4503599627370496.5` round to an integer. The same number is read again as a `Decimal`
    /// (38 significant digits, from the literal's own digits) and must be that integer.
    package func decodeWholeNumber<T: FixedWidthInteger & Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        func notWhole(_ underlyingError: (any Error)?) -> DecodingError {
            DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath + [key], debugDescription: "expected a whole number that fits in \(T.self)",
                    underlyingError: underlyingError))
        }
        let value: T
        do {
            value = try decode(type, forKey: key)
        } catch let error where !(error is DecodingError) {
            // Its own error type (`numberIsNotRepresentableInSwift`), which it turns into a
            // `DecodingError` without a path only once the whole decode failed.
            throw notWhole(error)
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            throw notWhole(context.underlyingError)
        }
        let exact: Decimal
        do {
            exact = try decode(Decimal.self, forKey: key)
        } catch {
            // A literal a `Decimal` cannot hold (`1e-400`): it was not the integer read.
            throw notWhole(error)
        }
        guard exact == Decimal(string: String(value)) else { throw notWhole(nil) }
        return value
    }
}
