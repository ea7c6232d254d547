import MacroTesting
import StrataMacros
import Testing

@Suite(.timeLimit(.minutes(5)), .macros(["sql": SQLMacro.self], record: .never))
struct SQLMacroTests {
    // MARK: - Expansions

    @Test func interpolatedExpressionAndValue() {
        assertMacro {
            #"""
            Player.where { #sql("\($0.name) COLLATE NOCASE = \(name)") }
            """#
        } expansion: {
            #"""
            Player.where { StrataQueries.SQLQueryExpression("\($0.name) COLLATE NOCASE = \(name)") }
            """#
        }
    }

    @Test func declaredType() {
        assertMacro {
            """
            #sql("count(*)", as: Int.self)
            """
        } expansion: {
            """
            StrataQueries.SQLQueryExpression("count(*)", as: Int.self)
            """
        }
    }

    @Test func quotesCommentsAndParenthesesThatDontCount() {
        assertMacro {
            #"""
            #sql("\"weird (name\" || 'it''s (' || `a)b` || [c(d] /* ( ' */ -- ) \" '\n + (1)", as: String.self)
            """#
        } expansion: {
            #"""
            StrataQueries.SQLQueryExpression("\"weird (name\" || 'it''s (' || `a)b` || [c(d] /* ( ' */ -- ) \" '\n + (1)", as: String.self)
            """#
        }
    }

    @Test func dollarInsideAnIdentifierAndJSONPathsInStrings() {
        assertMacro {
            #"""
            #sql("a$b + json_extract(\($0.data), '$.scores[0]') + ':x' + \(raw: "?")", as: Int.self)
            """#
        } expansion: {
            #"""
            StrataQueries.SQLQueryExpression("a$b + json_extract(\($0.data), '$.scores[0]') + ':x' + \(raw: "?")", as: Int.self)
            """#
        }
    }

    @Test func rawStringLiteral() {
        assertMacro {
            ##"""
            #sql(#"lower("name") = \#(name) AND note = '\n'"#)
            """##
        } expansion: {
            ##"""
            StrataQueries.SQLQueryExpression(#"lower("name") = \#(name) AND note = '\n'"#)
            """##
        }
    }

    @Test func multilineStringLiteral() {
        assertMacro {
            #"""
            #sql(
                """
                julianday('now') -- days since it's joined (
                  - julianday(\($0.joinedAt))
                """,
                as: Double.self
            )
            """#
        } expansion: {
            #"""
            StrataQueries.SQLQueryExpression("""
                julianday('now') -- days since it's joined (
                  - julianday(\($0.joinedAt))
                """, as: Double.self)
            """#
        }
    }

    @Test func rawInterpolationInsideQuotesIsFine() {
        assertMacro {
            #"""
            #sql("\($0.title) LIKE '%\(raw: pattern)%' /* \(raw: note) */")
            """#
        } expansion: {
            #"""
            StrataQueries.SQLQueryExpression("\($0.title) LIKE '%\(raw: pattern)%' /* \(raw: note) */")
            """#
        }
    }

    @Test func placeholdersInsideStringsCommentsAndIdentifiersAreText() {
        assertMacro {
            #"""
            #sql("'what? :no @no $no' || \"?col\" /* ? */ -- :x\n|| ':' || 1", as: String.self)
            """#
        } expansion: {
            #"""
            StrataQueries.SQLQueryExpression("'what? :no @no $no' || \"?col\" /* ? */ -- :x\n|| ':' || 1", as: String.self)
            """#
        }
    }

    // MARK: - Diagnostics

    @Test func notAStringLiteral() {
        assertMacro {
            """
            #sql(fragment, as: Int.self)
            """
        } diagnostics: {
            """
            #sql(fragment, as: Int.self)
                 ┬───────
                 ╰─ 🛑 #sql takes a string literal, because its SQL is checked at compile time: write the SQL inline ("…", interpolating values and expressions), or wrap a fragment built at run time with SQLQueryExpression(fragment)
            """
        }
    }

    @Test func unterminatedString() {
        assertMacro {
            #"""
            #sql("\($0.name) = 'it's'")
            """#
        } diagnostics: {
            #"""
            #sql("\($0.name) = 'it's'")
                                    ╰─ 🛑 unterminated SQL string literal in `… = 'it's'`: close it with a matching ' (write '' for a quote inside the string)
            """#
        }
    }

    @Test func unterminatedQuotedIdentifier() {
        assertMacro {
            #"""
            #sql("\"players.score > 0")
            """#
        } diagnostics: {
            #"""
            #sql("\"players.score > 0")
                  ╰─ 🛑 unterminated quoted identifier in `"players.sco…`: close it with a matching " (write "" for a quote inside the identifier)
            """#
        }
        assertMacro {
            #"""
            #sql("[players.score > 0")
            """#
        } diagnostics: {
            """
            #sql("[players.score > 0")
                  ╰─ 🛑 unterminated quoted identifier in `[players.sco…`: close the […] identifier with a matching ]
            """
        }
    }

    @Test func unterminatedBlockComment() {
        assertMacro {
            #"""
            #sql("score /* the best")
            """#
        } diagnostics: {
            """
            #sql("score /* the best")
                        ╰─ 🛑 unterminated comment in `score /* the best`: close it with */
            """
        }
    }

    @Test func unbalancedParentheses() {
        assertMacro {
            #"""
            #sql("max(\($0.score), (1 + 2)")
            """#
        } diagnostics: {
            #"""
            #sql("max(\($0.score), (1 + 2)")
                     ╰─ 🛑 unbalanced parentheses: the '(' in `max(\(…), (1 + 2)` is never closed; add the missing ')'
            """#
        }
        assertMacro {
            #"""
            #sql("(\($0.score) + 1)) * 2")
            """#
        } diagnostics: {
            #"""
            #sql("(\($0.score) + 1)) * 2")
                                   ╰─ 🛑 unbalanced parentheses: the ')' in `(\(…) + 1)) * 2` has no matching '('; remove it or add the missing '('
            """#
        }
    }

    @Test func lineCommentEndsAtAnEscapedNewline() {
        assertMacro {
            #"""
            #sql("1 -- note (\n) + 2")
            """#
        } diagnostics: {
            #"""
            #sql("1 -- note (\n) + 2")
                               ╰─ 🛑 unbalanced parentheses: the ')' in `) + 2` has no matching '('; remove it or add the missing '('
            """#
        }
    }

    @Test func bindParameters() {
        assertMacro {
            #"""
            #sql("score > ? AND rank = ?2 AND name = :name AND team = @team AND city = $city")
            """#
        } diagnostics: {
            #"""
            #sql("score > ? AND rank = ?2 AND name = :name AND team = @team AND city = $city")
                          │            │             │                │                ╰─ 🛑 raw bind parameter '$city' in #sql: interpolate the value instead, as \(value), which binds it as a parameter in order with the fragment's other values
                          │            │             │                ╰─ 🛑 raw bind parameter '@team' in #sql: interpolate the value instead, as \(value), which binds it as a parameter in order with the fragment's other values
                          │            │             ╰─ 🛑 raw bind parameter ':name' in #sql: interpolate the value instead, as \(value), which binds it as a parameter in order with the fragment's other values
                          │            ╰─ 🛑 raw bind parameter '?2' in #sql: interpolate the value instead, as \(value), which binds it as a parameter in order with the fragment's other values
                          ╰─ 🛑 raw bind parameter '?' in #sql: interpolate the value instead, as \(value), which binds it as a parameter in order with the fragment's other values
            """#
        }
    }

    @Test func interpolationInsideQuotesOrComments() {
        assertMacro {
            #"""
            #sql("\($0.title) LIKE '%\(pattern)%' -- \(note)")
            """#
        } diagnostics: {
            #"""
            #sql("\($0.title) LIKE '%\(pattern)%' -- \(note)")
                                                     ┬──────
                                     │               ╰─ ⚠️ interpolation inside a SQL comment is commented out (a bound value would leave an unused parameter): move it out of the comment, or use \(raw:) for trusted text
                                     ┬─────────
                                     ╰─ ⚠️ interpolation inside a SQL string literal becomes part of the string's text (a bound value's '?' is not a parameter there): move it outside the quotes, for example '%' || \(value) || '%', or use \(raw:) for trusted text
            """#
        } expansion: {
            #"""
            StrataQueries.SQLQueryExpression("\($0.title) LIKE '%\(pattern)%' -- \(note)")
            """#
        }
    }

    @Test func diagnosticsInAMultilineLiteral() {
        assertMacro {
            #"""
            #sql("""
                coalesce(
                  \($0.nickname),
                  'anonymous
                """)
            """#
        } diagnostics: {
            #"""
            #sql("""
                coalesce(
                        ╰─ 🛑 unbalanced parentheses: the '(' in `coalesce(` is never closed; add the missing ')'
                  \($0.nickname),
                  'anonymous
                  ╰─ 🛑 unterminated SQL string literal in `'anonymous`: close it with a matching ' (write '' for a quote inside the string)
                """)
            """#
        }
    }
}
