/// The default table name of a type: its name camel-cased, with the last word pluralized.
///
/// `Player` → `players`, `RemindersList` → `remindersLists`, `Category` → `categories`,
/// `Match` → `matches`, `URLItem` → `urlItems`.
func defaultTableName(forTypeNamed typeName: String) -> String {
    pluralize(lowercasingLeadingWord(typeName))
}

/// Lowercases the first letter, or a whole leading acronym: `URLItem` → `urlItem`,
/// `URL` → `url`, `Player` → `player`.
func lowercasingLeadingWord(_ name: String) -> String {
    let characters = Array(name)
    let uppercaseCount = characters.prefix { $0.isUppercase }.count
    guard uppercaseCount > 0 else { return name }
    let lowercased: Int
    if uppercaseCount == 1 || uppercaseCount == characters.count {
        lowercased = uppercaseCount
    } else if characters[uppercaseCount].isLowercase {
        // `URLItem`: the last capital starts the next word.
        lowercased = uppercaseCount - 1
    } else {
        // `URL2`, `ID_list`: the acronym ends at a digit or punctuation.
        lowercased = uppercaseCount
    }
    return String(characters[..<lowercased]).lowercased() + String(characters[lowercased...])
}

/// The plural of a name's last word: consonant + `y` → `ies`; `s`, `x`, `z`, `ch`, `sh` →
/// `es`; otherwise `s`.
func pluralize(_ name: String) -> String {
    let lower = name.lowercased()
    guard let last = lower.last else { return name }
    let vowels: Set<Character> = ["a", "e", "i", "o", "u"]
    if last == "y", lower.count > 1, let beforeLast = lower.dropLast().last, beforeLast.isLetter, !vowels.contains(beforeLast) {
        return String(name.dropLast()) + "ies"
    }
    if ["s", "x", "z"].contains(last) || lower.hasSuffix("ch") || lower.hasSuffix("sh") {
        return name + "es"
    }
    return name + "s"
}
