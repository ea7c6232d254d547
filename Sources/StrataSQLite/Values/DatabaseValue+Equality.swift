extension DatabaseValue {
    /// Equal as SQLite compares them: texts by their bytes, not by Swift's `String ==`, which
    /// calls canonically equivalent texts equal (`"caf\u{E9}"` and `"cafe\u{301}"`). SQLite
    /// keeps those as two different values (two keys, two foreign keys), so code that decides
    /// whether a column changed must see them as different.
    public static func == (lhs: DatabaseValue, rhs: DatabaseValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.integer(let left), .integer(let right)): left == right
        case (.real(let left), .real(let right)): left == right
        case (.text(let left), .text(let right)): left.utf8.count == right.utf8.count && left.utf8.elementsEqual(right.utf8)
        case (.blob(let left), .blob(let right)): left == right
        default: false
        }
    }

    /// The hash that goes with ``==(_:_:)``: a text's bytes.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0)
        case .integer(let value):
            hasher.combine(1)
            hasher.combine(value)
        case .real(let value):
            hasher.combine(2)
            hasher.combine(value)
        case .text(let value):
            hasher.combine(3)
            var text = value
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            hasher.combine(value.utf8.count)
        case .blob(let value):
            hasher.combine(4)
            hasher.combine(value)
        }
    }
}
