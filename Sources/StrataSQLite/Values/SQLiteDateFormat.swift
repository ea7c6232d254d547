import Foundation

/// Formats and parses SQLite's date text without Foundation formatters, which are slow and
/// locale-sensitive. All dates are UTC, with millisecond precision.
enum SQLiteDateFormat {
    static func string(from date: Date) -> String {
        let totalMilliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var days = totalMilliseconds / 86_400_000
        var milliseconds = totalMilliseconds % 86_400_000
        if milliseconds < 0 {
            milliseconds += 86_400_000
            days -= 1
        }
        let (year, month, day) = civilDate(fromDaysSinceEpoch: days)
        let seconds = milliseconds / 1000
        var bytes = [UInt8]()
        bytes.reserveCapacity(23)
        if (0...9999).contains(year) {
            append(year, digits: 4, to: &bytes)
        } else {
            // Outside SQLite's date range (0000 to 9999): written whole, so the text never
            // names a wrong date; it does not read back as a date.
            bytes += Array(String(year).utf8)
        }
        bytes.append(UInt8(ascii: "-"))
        append(month, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        append(day, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        append(seconds / 3600, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        append(seconds / 60 % 60, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        append(seconds % 60, digits: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        append(milliseconds % 1000, digits: 3, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses `YYYY-MM-DD`, optionally followed by ` ` or `T`, `HH:MM`, optional `:SS`,
    /// optional fraction, and an optional `Z`.
    static func date(from text: String) -> Date? {
        let bytes = Array(text.utf8)
        var position = 0
        func number(_ digits: Int) -> Int64? {
            guard position + digits <= bytes.count else { return nil }
            var value: Int64 = 0
            for offset in 0..<digits {
                let byte = bytes[position + offset]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            position += digits
            return value
        }
        func expect(_ character: Character) -> Bool {
            guard position < bytes.count, bytes[position] == character.asciiValue else { return false }
            position += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            (1...12).contains(month), (1...daysInMonth(month, year: year)).contains(day)
        else { return nil }
        var secondsOfDay: Int64 = 0
        var milliseconds: Int64 = 0
        if position < bytes.count, bytes[position] == UInt8(ascii: " ") || bytes[position] == UInt8(ascii: "T") {
            position += 1
            guard let hour = number(2), expect(":"), let minute = number(2), hour < 24, minute < 60 else { return nil }
            secondsOfDay = hour * 3600 + minute * 60
            if expect(":") {
                guard let second = number(2), second < 60 else { return nil }
                secondsOfDay += second
                if expect(".") {
                    var scale: Int64 = 100
                    var sawDigit = false
                    while position < bytes.count, bytes[position] >= 48, bytes[position] <= 57 {
                        milliseconds += Int64(bytes[position] - 48) * scale
                        scale /= 10
                        position += 1
                        sawDigit = true
                    }
                    guard sawDigit else { return nil }
                }
            }
        }
        _ = expect("Z")
        guard position == bytes.count else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let total = (days * 86_400 + secondsOfDay) * 1000 + milliseconds
        return Date(timeIntervalSince1970: Double(total) / 1000)
    }

    private static func daysInMonth(_ month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func append(_ value: Int64, digits: Int, to bytes: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<digits { divisor *= 10 }
        var value = value
        while divisor > 0 {
            bytes.append(UInt8(48 + value / divisor % 10))
            value %= divisor
            divisor /= 10
        }
    }

    // Days/civil conversions for the proleptic Gregorian calendar (Howard Hinnant's algorithms,
    // public domain descriptions of the arithmetic).
    private static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilDate(fromDaysSinceEpoch days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
