extension KeyedDecodingContainer {
    /// A whole number under `key`, and when the JSON holds another number there (`2.5`,
    /// `1e30`), an error that names the key: Foundation's `JSONDecoder` on Linux reports such
    /// a number for an `Int` as "The given data was not valid JSON." at no path, so a service
    /// would blame the whole body, which is valid JSON.
    package func decodeWholeNumber<T: FixedWidthInteger & Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        do {
            return try decode(type, forKey: key)
        } catch let error where !(error is DecodingError) {
            // Its own error type (`numberIsNotRepresentableInSwift`), which it turns into a
            // `DecodingError` without a path only once the whole decode failed.
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath + [key], debugDescription: "expected a whole number that fits in \(T.self)",
                    underlyingError: error))
        } catch DecodingError.dataCorrupted(let context) where context.codingPath.isEmpty {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: codingPath + [key], debugDescription: "expected a whole number that fits in \(T.self)",
                    underlyingError: context.underlyingError))
        }
    }
}
