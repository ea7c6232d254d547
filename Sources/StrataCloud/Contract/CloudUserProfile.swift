/// How a user appears to the users they share with: a display name and, optionally, an email
/// address.
///
/// Each user sets their own (``CloudContainer/setUserProfile(_:)``). Clouds fill
/// ``CloudShare/Participant/displayName`` and ``CloudShare/Participant/email`` from it in every
/// share they return; a user who set none appears with neither. Only the user themselves and
/// the users on a share with them can read it.
public struct CloudUserProfile: Sendable, Hashable, Codable {
    /// The name other users see: 1 to ``maximumDisplayNameLength`` characters once leading
    /// and trailing whitespace is trimmed (clouds store it trimmed), no control characters.
    public var displayName: String
    /// An email address: at most ``maximumEmailLength`` characters, exactly one `@` with
    /// something on each side, no whitespace or control characters; nil for none.
    public var email: String?

    /// A profile showing `displayName`, and `email` when given.
    public init(displayName: String, email: String? = nil) {
        self.displayName = displayName
        self.email = email
    }

    /// The longest display name, in characters (Unicode scalars) after trimming: 256.
    public static let maximumDisplayNameLength = 256
    /// The longest email address, in characters (Unicode scalars): 320.
    public static let maximumEmailLength = 320

    /// The profile as clouds store it (the display name trimmed), or the first problem found.
    ///
    /// - Throws: ``CloudUserProfileError`` naming the field and what is wrong with it.
    public func validated() throws(CloudUserProfileError) -> CloudUserProfile {
        let name = Self.trimmingWhitespace(displayName)
        guard !name.isEmpty else { throw .displayName(.empty) }
        let length = name.unicodeScalars.count
        guard length <= Self.maximumDisplayNameLength else { throw .displayName(.tooLong(length)) }
        guard !name.unicodeScalars.contains(where: Self.isControl) else { throw .displayName(.controlCharacter) }
        if let email {
            let length = email.unicodeScalars.count
            guard length <= Self.maximumEmailLength else { throw .email(.tooLong(length)) }
            guard !email.unicodeScalars.contains(where: Self.isControl) else { throw .email(.controlCharacter) }
            guard !email.unicodeScalars.contains(where: Self.isWhitespace) else { throw .email(.whitespace) }
            let parts = email.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { throw .email(.notAnAddress) }
        }
        return CloudUserProfile(displayName: name, email: email)
    }

    /// Whitespace as profiles trim it: the space separators (Unicode category Zs), tab, and the
    /// line breaks U+000A–U+000D, U+0085, U+2028 and U+2029. Listed rather than looked up, so
    /// that the API document can say exactly the same.
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// A control character (Unicode category Cc): U+0000–U+001F and U+007F–U+009F.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    static func trimmingWhitespace(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isWhitespace($0) }),
            let last = scalars.lastIndex(where: { !isWhitespace($0) })
        else { return "" }
        return String(scalars[first...last])
    }
}

/// Why a cloud refused a profile (``CloudContainer/setUserProfile(_:)``): the field, and what
/// is wrong with it. The service answers such a request with `invalidRequest` naming
/// ``field``.
public enum CloudUserProfileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The display name is not valid.
    case displayName(Problem)
    /// The email address is not valid.
    case email(Problem)

    /// What is wrong with a field.
    public enum Problem: Hashable, Sendable {
        /// Nothing but whitespace.
        case empty
        /// This many characters (Unicode scalars), over the field's maximum.
        case tooLong(Int)
        /// A control character (a NUL, a line break or tab inside the name...).
        case controlCharacter
        /// Whitespace, which an email address never holds.
        case whitespace
        /// Not one `@` with something on each side.
        case notAnAddress
    }

    /// The field's name in the request: `displayName` or `email`.
    public var field: String {
        switch self {
        case .displayName: "displayName"
        case .email: "email"
        }
    }

    /// What is wrong with the field.
    public var reason: String {
        let (problem, maximum) =
            switch self {
            case .displayName(let problem): (problem, CloudUserProfile.maximumDisplayNameLength)
            case .email(let problem): (problem, CloudUserProfile.maximumEmailLength)
            }
        return switch problem {
        case .empty: "empty once whitespace is trimmed"
        case .tooLong(let length): "\(length) characters; at most \(maximum)"
        case .controlCharacter: "contains a control character"
        case .whitespace: "contains whitespace"
        case .notAnAddress: "not one \"@\" with something on each side"
        }
    }

    /// `<field>: <reason>`.
    public var description: String { "\(field): \(reason)" }
}
