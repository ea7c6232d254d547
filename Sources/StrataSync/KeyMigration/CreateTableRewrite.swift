import StrataSQLite

/// The edits that turn a table's `CREATE TABLE` statement into the statement of its rebuilt
/// copy: another name, some columns retyped to TEXT, the primary key made `NOT NULL` without
/// `AUTOINCREMENT`, and references to rebuilt tables pointed at their copies. Everything
/// else — other columns, types, defaults, CHECK and COLLATE clauses, generated columns,
/// conflict clauses, ON DELETE / ON UPDATE actions, `STRICT` — stays as written.
struct CreateTableRewrite {
    /// The table's name, for errors.
    var table: String
    /// The copy's name.
    var newName: String
    /// Columns (folded names) whose declared type becomes TEXT.
    var retypedColumns: Set<String>
    /// The primary key (folded name) that becomes UUID text, for a migrated table.
    var uuidKey: String?
    /// Referenced tables (folded names) to point at another name: the rebuilt copies.
    var renamedReferences: [String: String]

    private struct Edit {
        var range: Range<Int>
        var replacement: [SQLTokens.Token]
        var order: Int
    }

    /// Words that end a column's type and start its constraints.
    private static let constraintStarts: Set<String> = [
        "constraint", "primary", "not", "null", "unique", "check", "default", "collate", "references", "generated", "as",
    ]
    /// Words that start a table constraint rather than a column definition.
    private static let tableConstraintStarts: Set<String> = ["constraint", "primary", "unique", "check", "foreign"]

    /// The rewritten statement.
    ///
    /// - Throws: ``UUIDKeyMigrationError/unsupportedSchema(table:reason:)`` when the statement
    ///   does not have the shape `CREATE TABLE name (definitions) options`, or when a column
    ///   to retype is not found in it.
    func apply(to sql: String) throws -> String {
        var tokens = SQLTokens(sql)
        var edits: [Edit] = []
        func edit(_ range: Range<Int>, _ replacement: [SQLTokens.Token]) {
            edits.append(Edit(range: range, replacement: replacement, order: edits.count))
        }
        func unsupported(_ reason: String) -> UUIDKeyMigrationError {
            .unsupportedSchema(table: table, reason: reason)
        }

        // CREATE [TEMP] TABLE [IF NOT EXISTS] [schema.]name (
        guard let tableKeyword = tokens.tokens.firstIndex(where: { $0.isKeyword("TABLE") }) else {
            throw unsupported("its statement has no TABLE keyword")
        }
        guard var nameStart = tokens.significant(from: tableKeyword + 1) else { throw unsupported("its statement ends early") }
        if tokens.tokens[nameStart].isKeyword("IF") {
            var index = nameStart
            for word in ["IF", "NOT", "EXISTS"] {
                guard let next = tokens.significant(from: index), tokens.tokens[next].isKeyword(word) else {
                    throw unsupported("unexpected text after CREATE TABLE")
                }
                index = next + 1
            }
            guard let next = tokens.significant(from: index) else { throw unsupported("its statement ends early") }
            nameStart = next
        }
        guard let open = tokens.tokens[nameStart...].firstIndex(where: { $0.kind == .punctuation && $0.text == "(" }),
            let close = tokens.closing(open)
        else {
            throw unsupported("it was not created with column definitions (CREATE TABLE … AS SELECT?)")
        }
        if tokens.tokens[nameStart..<open].contains(where: { $0.isKeyword("AS") }) {
            throw unsupported("it was created with CREATE TABLE … AS SELECT")
        }
        let nameEnd = (tokens.tokens[nameStart..<open].lastIndex(where: { !$0.isTrivia }) ?? nameStart) + 1
        edit(nameStart..<nameEnd, [SQLTokens.Token(kind: .quotedIdentifier, text: newName.quotedIdentifier)])

        // The definitions, split on the commas outside parentheses.
        var elements: [Range<Int>] = []
        var depth = 0
        var start = open + 1
        for index in (open + 1)..<close where tokens.tokens[index].kind == .punctuation {
            switch tokens.tokens[index].text {
            case "(": depth += 1
            case ")": depth -= 1
            case "," where depth == 0:
                elements.append(start..<index)
                start = index + 1
            default: break
            }
        }
        elements.append(start..<close)

        var retypedFound: Set<String> = []
        for element in elements {
            guard let first = tokens.significant(from: element.lowerBound, before: element.upperBound) else {
                throw unsupported("an empty definition between commas")
            }
            let top = topLevel(element, in: tokens)
            let firstToken = tokens.tokens[first]
            let isTableConstraint = firstToken.kind == .word && Self.tableConstraintStarts.contains(firstToken.text.sqliteFolded)
            if !isTableConstraint {
                guard let column = firstToken.name?.sqliteFolded else { throw unsupported("a column definition without a name") }
                if retypedColumns.contains(column) {
                    retypedFound.insert(column)
                    // The type: the words (and parenthesized sizes) after the name, up to the
                    // first constraint.
                    var typeEnd = first + 1
                    var index = first + 1
                    while index < element.upperBound {
                        let token = tokens.tokens[index]
                        if token.isTrivia {
                            index += 1
                            continue
                        }
                        if token.kind == .word, Self.constraintStarts.contains(token.text.sqliteFolded) { break }
                        if token.kind == .punctuation, token.text == "(" {
                            guard let end = tokens.closing(index) else { throw unsupported("unbalanced parentheses") }
                            index = end + 1
                        } else if token.kind == .punctuation {
                            break
                        } else {
                            index += 1
                        }
                        typeEnd = index
                    }
                    if let typeStart = tokens.significant(from: first + 1, before: typeEnd) {
                        edit(typeStart..<typeEnd, [SQLTokens.Token(kind: .word, text: "TEXT")])
                    } else {
                        edit(
                            (first + 1)..<(first + 1),
                            [SQLTokens.Token(kind: .whitespace, text: " "), SQLTokens.Token(kind: .word, text: "TEXT")])
                    }
                }
                if column == uuidKey {
                    removeAutoincrement(in: top, tokens: tokens, edit: edit)
                    let hasNotNull = zip(top, top.dropFirst()).contains {
                        tokens.tokens[$0].isKeyword("NOT") && tokens.tokens[$1].isKeyword("NULL")
                    }
                    if !hasNotNull, let last = top.last {
                        edit(
                            (last + 1)..<(last + 1),
                            [
                                SQLTokens.Token(kind: .whitespace, text: " "), SQLTokens.Token(kind: .word, text: "NOT"),
                                SQLTokens.Token(kind: .whitespace, text: " "), SQLTokens.Token(kind: .word, text: "NULL"),
                            ])
                    }
                }
            } else if uuidKey != nil, top.contains(where: { tokens.tokens[$0].isKeyword("PRIMARY") }) {
                // PRIMARY KEY (id AUTOINCREMENT): the keyword sits inside the parentheses.
                removeAutoincrement(in: Array(element), tokens: tokens, edit: edit)
            }
            // REFERENCES parent: in a column's constraints or a FOREIGN KEY clause.
            for index in top where tokens.tokens[index].isKeyword("REFERENCES") {
                guard let parent = tokens.significant(from: index + 1, before: element.upperBound),
                    let parentName = tokens.tokens[parent].name?.sqliteFolded
                else { throw unsupported("REFERENCES without a table") }
                if let renamed = renamedReferences[parentName] {
                    edit(parent..<(parent + 1), [SQLTokens.Token(kind: .quotedIdentifier, text: renamed.quotedIdentifier)])
                }
            }
        }
        if let missing = retypedColumns.subtracting(retypedFound).sorted().first {
            throw unsupported("column \"\(missing)\" was not found in its CREATE TABLE statement")
        }

        // Last edit first, so earlier ranges keep their indexes; of two edits at one place,
        // the one made first ends up first.
        for change in edits.sorted(by: { ($0.range.lowerBound, $0.order) > ($1.range.lowerBound, $1.order) }) {
            tokens.tokens.replaceSubrange(change.range, with: change.replacement)
        }
        return tokens.sql
    }

    /// The significant tokens of `element` outside any parentheses.
    private func topLevel(_ element: Range<Int>, in tokens: SQLTokens) -> [Int] {
        var result: [Int] = []
        var depth = 0
        for index in element {
            let token = tokens.tokens[index]
            if token.kind == .punctuation, token.text == "(" { depth += 1 }
            if depth == 0, !token.isTrivia { result.append(index) }
            if token.kind == .punctuation, token.text == ")" { depth -= 1 }
        }
        return result
    }

    /// Removes `AUTOINCREMENT` (and the space before it): a TEXT key cannot have it.
    private func removeAutoincrement(in indexes: [Int], tokens: SQLTokens, edit: (Range<Int>, [SQLTokens.Token]) -> Void) {
        for index in indexes where tokens.tokens[index].isKeyword("AUTOINCREMENT") {
            let start = index > 0 && tokens.tokens[index - 1].kind == .whitespace ? index - 1 : index
            edit(start..<(index + 1), [])
        }
    }
}
