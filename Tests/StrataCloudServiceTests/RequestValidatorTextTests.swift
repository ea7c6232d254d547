import StrataCloud
import StrataCloudWire
import Testing

@testable import StrataCloudService

/// A name's length is counted in Unicode scalars, as JSON Schema's `maxLength` counts, and a
/// NUL is found anywhere in a text: at every limit ±1, in one-, two-, three- and four-byte
/// scalars (where the UTF-8 length and the scalar count part), and at the first, a middle and
/// the last byte.
@Suite(.timeLimit(.minutes(1)))
struct RequestValidatorTextTests {
    static let validator = RequestValidator(configuration: CloudServiceConfiguration(jwtKey: "unused"))
    static var limit: Int { validator.configuration.maximumNameLength }

    static func accepts(_ name: String) -> Bool {
        do {
            try validator.name(name, "name")
            return true
        } catch {
            #expect(error.field == "name")
            return false
        }
    }

    @Test(arguments: ["a", "é", "€", "🎲"])
    func aNameIsCountedInScalars(scalar: String) {
        for count in [0, 1, Self.limit - 1, Self.limit, Self.limit + 1, 2 * Self.limit] {
            let name = String(repeating: scalar, count: count)
            #expect(Self.accepts(name) == (count <= Self.limit), "\(count) × \(scalar)")
        }
        // ASCII up to the limit in bytes, then wide scalars past it in scalars.
        let mixed = String(repeating: "a", count: Self.limit - 2) + String(repeating: scalar, count: 3)
        #expect(!Self.accepts(mixed))
        #expect(Self.accepts(String(mixed.unicodeScalars.dropLast())))
    }

    @Test func aNULIsFoundWhereverItIs() {
        for length in [1, 2, 15, 16, 17, 100, 5_000] {
            for position in Set([0, length / 2, length - 1]) {
                var bytes = Array(repeating: UInt8(ascii: "x"), count: length)
                bytes[position] = 0
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(throws: InvalidRequest.self, "\(length) @ \(position)") { try Self.validator.text(text, "text") }
                bytes[position] = UInt8(ascii: "y")
                #expect(throws: Never.self) { try Self.validator.text(String(decoding: bytes, as: UTF8.self), "text") }
            }
        }
        #expect(throws: Never.self) { try Self.validator.text("", "text") }
        #expect(throws: InvalidRequest.self) { try Self.validator.text("é\u{0}🎲", "text") }
        #expect(throws: InvalidRequest.self) { try Self.validator.name("game\u{0}", "name") }
    }
}
