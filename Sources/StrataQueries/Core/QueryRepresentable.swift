import Foundation
import StrataSQLite

/// A stored form of a Swift value: what `@Column(as:)` names.
///
/// The representation is what is bound and decoded; `QueryOutput` is the property's type.
///
/// ```swift
/// @Column(as: Date.UnixTimeRepresentation.self) var createdAt: Date
/// @Column(as: JSONRepresentation<[String]>.self) var tags: [String]
/// ```
public protocol QueryRepresentable<QueryOutput>: QueryBindable {
    associatedtype QueryOutput
    init(queryOutput: QueryOutput)
    var queryOutput: QueryOutput { get }
}

/// A `Codable` value stored as JSON text.
public struct JSONRepresentation<Value: Codable & Sendable>: QueryRepresentable {
    public var queryOutput: Value

    public init(queryOutput: Value) {
        self.queryOutput = queryOutput
    }

    public var databaseValue: DatabaseValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding fails only for values JSON cannot hold (a non-finite Double); NULL then
        // fails loudly on a NOT NULL column instead of storing something that decodes wrongly.
        guard let data = try? encoder.encode(queryOutput) else { return .null }
        return .text(String(decoding: data, as: UTF8.self))
    }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        let data: Data
        switch value {
        case .text(let text): data = Data(text.utf8)
        case .blob(let blob): data = blob
        default: return nil
        }
        return (try? JSONDecoder().decode(Value.self, from: data)).map(Self.init(queryOutput:))
    }
}

extension UUID {
    /// A UUID stored as lowercase text: `"6ba7b810-9dad-11d1-80b4-00c04fd430c8"`.
    public struct LowercasedRepresentation: QueryRepresentable {
        public var queryOutput: UUID
        public init(queryOutput: UUID) { self.queryOutput = queryOutput }
        public var databaseValue: DatabaseValue { .text(queryOutput.uuidString.lowercased()) }
        public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
            UUID.fromDatabaseValue(value).map(Self.init(queryOutput:))
        }
    }

    /// A UUID stored as uppercase text, as Foundation prints it.
    public struct UppercasedRepresentation: QueryRepresentable {
        public var queryOutput: UUID
        public init(queryOutput: UUID) { self.queryOutput = queryOutput }
        public var databaseValue: DatabaseValue { .text(queryOutput.uuidString) }
        public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
            UUID.fromDatabaseValue(value).map(Self.init(queryOutput:))
        }
    }

    /// A UUID stored as a 16-byte blob.
    public struct BytesRepresentation: QueryRepresentable {
        public var queryOutput: UUID
        public init(queryOutput: UUID) { self.queryOutput = queryOutput }
        public var databaseValue: DatabaseValue {
            let bytes = queryOutput.uuid
            return .blob(withUnsafeBytes(of: bytes) { Data($0) })
        }
        public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
            guard case .blob(let data) = value, data.count == 16 else { return nil }
            return UUID.fromDatabaseValue(value).map(Self.init(queryOutput:))
        }
    }
}

extension Date {
    /// A date stored as ISO-8601 text with milliseconds, in UTC: `"2026-11-21T09:30:00.000Z"`.
    public struct ISO8601Representation: QueryRepresentable {
        public var queryOutput: Date
        public init(queryOutput: Date) { self.queryOutput = queryOutput }
        public var databaseValue: DatabaseValue {
            .text(queryOutput.formatted(Self.format))
        }
        public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
            guard case .text(let text) = value else { return Date.fromDatabaseValue(value).map(Self.init(queryOutput:)) }
            if let date = try? Self.format.parse(text) { return Self(queryOutput: date) }
            return Date.fromDatabaseValue(value).map(Self.init(queryOutput:))
        }
        static let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: TimeZone(identifier: "UTC") ?? .current)
    }

    /// A date stored as seconds since 1970 (a REAL, so fractions survive).
    public struct UnixTimeRepresentation: QueryRepresentable {
        public var queryOutput: Date
        public init(queryOutput: Date) { self.queryOutput = queryOutput }
        public var databaseValue: DatabaseValue { .real(queryOutput.timeIntervalSince1970) }
        public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
            switch value {
            case .integer(let seconds): Self(queryOutput: Date(timeIntervalSince1970: Double(seconds)))
            case .real(let seconds): Self(queryOutput: Date(timeIntervalSince1970: seconds))
            default: nil
            }
        }
    }
}

extension Optional: QueryRepresentable where Wrapped: QueryRepresentable {
    public typealias QueryOutput = Wrapped.QueryOutput?
    public init(queryOutput: Wrapped.QueryOutput?) {
        self = queryOutput.map(Wrapped.init(queryOutput:))
    }
    public var queryOutput: Wrapped.QueryOutput? { self?.queryOutput }
}
