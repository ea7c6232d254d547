import Foundation

/// Text compared and hashed by its UTF-8 bytes, as SQLite and PostgreSQL compare keys.
///
/// Swift's `String ==` is canonical equivalence: `"caf\u{E9}"` (one scalar) equals
/// `"cafe\u{301}"` (a combining accent). SQLite keeps both as two different primary keys, so
/// anything that identifies a record by its key text (sets of record names, dictionaries keyed
/// by them) must tell them apart, or two rows become one record and one of them is lost.
package struct ExactText: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    package let text: String

    package init(_ text: String) { self.text = text }

    package init(stringLiteral text: String) { self.text = text }

    package static func == (lhs: ExactText, rhs: ExactText) -> Bool { lhs.text.hasSameBytes(as: rhs.text) }

    package func hash(into hasher: inout Hasher) { text.hashBytes(into: &hasher) }

    package var description: String { text }
}

extension String {
    /// Whether both texts have the same UTF-8 bytes (not merely canonically equivalent).
    ///
    /// Keys are compared on every dictionary probe of a batch (record ids, names): the bytes go
    /// to `memcmp` where both texts are contiguous UTF-8 (native Swift strings are), as the
    /// generic `elementsEqual` over two `UTF8View`s walked them one index at a time, and was
    /// 3.6 % of a sync benchmark's samples.
    package func hasSameBytes(as other: String) -> Bool {
        let same = withContiguousUTF8(beside: other) { mine, theirs -> Bool in
            guard mine.count == theirs.count else { return false }
            guard let left = mine.baseAddress, let right = theirs.baseAddress else { return true }
            return memcmp(left, right, mine.count) == 0
        }
        if let same { return same }
        return utf8.count == other.utf8.count && utf8.elementsEqual(other.utf8)
    }

    /// Whether the text's UTF-8 bytes sort before `other`'s (SQLite's `BINARY` order), by
    /// `memcmp` where both are contiguous.
    package func bytesPrecede(_ other: String) -> Bool {
        let precedes = withContiguousUTF8(beside: other) { mine, theirs -> Bool in
            let common = Swift.min(mine.count, theirs.count)
            if common > 0, let left = mine.baseAddress, let right = theirs.baseAddress {
                let order = memcmp(left, right, common)
                if order != 0 { return order < 0 }
            }
            return mine.count < theirs.count
        }
        if let precedes { return precedes }
        return utf8.lexicographicallyPrecedes(other.utf8)
    }

    /// `body` over both texts' UTF-8 bytes when both are contiguous (native Swift strings
    /// are); nil when either is not, for the caller's generic path.
    private func withContiguousUTF8<Result>(
        beside other: String, _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result? {
        let answer = utf8.withContiguousStorageIfAvailable { mine in
            other.utf8.withContiguousStorageIfAvailable { theirs in body(mine, theirs) }
        }
        return answer ?? nil
    }

    /// Feeds the UTF-8 bytes, with their count as a terminator, to `hasher`: the hash that goes
    /// with ``hasSameBytes(as:)``.
    package func hashBytes(into hasher: inout Hasher) {
        var copy = self
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(utf8.count)
    }
}

/// A dictionary keyed by names compared as bytes (``ExactText``), read and written with
/// `String` keys.
package struct ExactKeyed<Value>: Sequence {
    package private(set) var storage: [ExactText: Value] = [:]

    package init() {}

    package init<S: Sequence>(_ pairs: S, uniquingKeysWith combine: (Value, Value) -> Value) where S.Element == (String, Value) {
        storage = Dictionary(pairs.map { pair -> (ExactText, Value) in (ExactText(pair.0), pair.1) }, uniquingKeysWith: combine)
    }

    package subscript(_ key: String) -> Value? {
        get { storage[ExactText(key)] }
        set { storage[ExactText(key)] = newValue }
    }

    package subscript(_ key: String, default value: @autoclosure () -> Value) -> Value {
        get { storage[ExactText(key), default: value()] }
        set { storage[ExactText(key), default: value()] = newValue }
    }

    @discardableResult package mutating func removeValue(forKey key: String) -> Value? {
        storage.removeValue(forKey: ExactText(key))
    }

    package mutating func removeAll() { storage.removeAll() }

    package mutating func removeAll(where shouldRemove: (String, Value) -> Bool) {
        storage = storage.filter { !shouldRemove($0.key.text, $0.value) }
    }

    package var keys: [String] { storage.keys.map(\.text) }

    /// The names, as a set compared by bytes.
    package var names: ExactNames { ExactNames(storage.keys.map(\.text)) }

    package mutating func merge(_ other: ExactKeyed<Value>, uniquingKeysWith combine: (Value, Value) -> Value) {
        storage.merge(other.storage, uniquingKeysWith: combine)
    }

    /// A plain dictionary, for an API keyed by `String`: names that differ only in their
    /// bytes share one entry there (the first kept).
    package var dictionary: [String: Value] {
        Dictionary(storage.map { ($0.key.text, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
    package var values: Dictionary<ExactText, Value>.Values { storage.values }
    package var count: Int { storage.count }
    package var isEmpty: Bool { storage.isEmpty }

    package func makeIterator() -> some IteratorProtocol<(key: String, value: Value)> {
        storage.lazy.map { (key: $0.key.text, value: $0.value) }.makeIterator()
    }
}

extension ExactKeyed: Sendable where Value: Sendable {}

extension ExactKeyed: Equatable where Value: Equatable {}

extension ExactKeyed: ExpressibleByDictionaryLiteral {
    package init(dictionaryLiteral elements: (String, Value)...) {
        self.init(elements, uniquingKeysWith: { $1 })
    }
}

/// A set of names compared as bytes (``ExactText``), filled and asked with `String`s.
package struct ExactNames: Sequence, Sendable, Equatable, ExpressibleByArrayLiteral {
    package private(set) var storage: Set<ExactText> = []

    package init() {}

    package init<S: Sequence>(_ names: S) where S.Element == String {
        storage = Set(names.map { ExactText($0) })
    }

    package init(arrayLiteral names: String...) { self.init(names) }

    package func contains(_ name: String) -> Bool { storage.contains(ExactText(name)) }

    @discardableResult package mutating func insert(_ name: String) -> Bool { storage.insert(ExactText(name)).inserted }

    @discardableResult package mutating func remove(_ name: String) -> Bool { storage.remove(ExactText(name)) != nil }

    package mutating func formUnion<S: Sequence>(_ names: S) where S.Element == String {
        storage.formUnion(names.map { ExactText($0) })
    }

    package mutating func formUnion(_ other: ExactNames) { storage.formUnion(other.storage) }

    package func union(_ other: ExactNames) -> ExactNames {
        var result = self
        result.formUnion(other)
        return result
    }

    package func subtracting(_ other: ExactNames) -> ExactNames {
        var result = ExactNames()
        result.storage = storage.subtracting(other.storage)
        return result
    }

    package func isSubset(of other: ExactNames) -> Bool { storage.isSubset(of: other.storage) }

    package var count: Int { storage.count }
    package var isEmpty: Bool { storage.isEmpty }

    package func makeIterator() -> some IteratorProtocol<String> { storage.lazy.map(\.text).makeIterator() }
}
