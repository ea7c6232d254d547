import Foundation

// The few escapes the JSON and SVG writers need: the reports are written by hand, so their field
// order stays fixed and readable in a diff.

/// `text` as a JSON string literal.
public func jsonString(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case "\n": result += "\\n"
        case "\t": result += "\\t"
        case let s where s.value < 0x20: result += String(format: "\\u%04x", s.value)
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result + "\""
}

/// A JSON number: plenty of digits for microsecond timings, and `null` for what JSON cannot hold.
public func jsonNumber(_ value: Double) -> String {
    value.isFinite ? String(format: "%.9g", value) : "null"
}

/// `text` escaped for XML content and attribute values.
public func xmlEscape(_ text: String) -> String {
    text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
        .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
}

/// A coordinate for SVG, to a tenth of a pixel.
public func svgNumber(_ value: Double) -> String { String(format: "%.1f", value) }
