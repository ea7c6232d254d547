import MacroTesting
import StrataMacros
import Testing

@Suite(.timeLimit(.minutes(5)), .macros(["DatabaseFunction": DatabaseFunctionMacro.self], record: .never))
struct DatabaseFunctionMacroTests {
    // MARK: - Expansions

    @Test func deterministicGlobalFunction() {
        assertMacro {
            """
            @DatabaseFunction(isDeterministic: true)
            func isWinner(score: Int, of target: Int) -> Bool { score >= target }
            """
        } expansion: {
            """
            func isWinner(score: Int, of target: Int) -> Bool { score >= target }

            struct __DatabaseFunction_isWinner: StrataQueries.ScalarDatabaseFunction {
                let name = "isWinner"
                let body: @Sendable (Int, Int) -> Bool
                func callAsFunction(score: some StrataQueries.QueryExpression<Int>, of target: some StrataQueries.QueryExpression<Int>) -> StrataQueries.SQLQueryExpression<Bool> {
                    self.call([score.queryFragment, target.queryFragment])
                }
                var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction("isWinner", deterministic: true, body)
                }
            }

            var $isWinner: __DatabaseFunction_isWinner {
                __DatabaseFunction_isWinner { (score: Int, target: Int) in
                    isWinner(score: score, of: target)
                }
            }
            """
        }
    }

    @Test func defaults() {
        assertMacro {
            """
            @DatabaseFunction
            func initials(of name: String) -> String { String(name.prefix(1)) }
            """
        } expansion: {
            """
            func initials(of name: String) -> String { String(name.prefix(1)) }

            struct __DatabaseFunction_initials: StrataQueries.ScalarDatabaseFunction {
                let name = "initials"
                let body: @Sendable (String) -> String
                func callAsFunction(of name: some StrataQueries.QueryExpression<String>) -> StrataQueries.SQLQueryExpression<String> {
                    self.call([name.queryFragment])
                }
                var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction("initials", deterministic: false, body)
                }
            }

            var $initials: __DatabaseFunction_initials {
                __DatabaseFunction_initials { (name: String) in
                    initials(of: name)
                }
            }
            """
        }
    }

    @Test func customSQLName() {
        assertMacro {
            """
            @DatabaseFunction("is_winner", isDeterministic: true)
            func isWinner(score: Int, of target: Int) -> Bool { score >= target }
            """
        } expansion: {
            """
            func isWinner(score: Int, of target: Int) -> Bool { score >= target }

            struct __DatabaseFunction_isWinner: StrataQueries.ScalarDatabaseFunction {
                let name = "is_winner"
                let body: @Sendable (Int, Int) -> Bool
                func callAsFunction(score: some StrataQueries.QueryExpression<Int>, of target: some StrataQueries.QueryExpression<Int>) -> StrataQueries.SQLQueryExpression<Bool> {
                    self.call([score.queryFragment, target.queryFragment])
                }
                var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction("is_winner", deterministic: true, body)
                }
            }

            var $isWinner: __DatabaseFunction_isWinner {
                __DatabaseFunction_isWinner { (score: Int, target: Int) in
                    isWinner(score: score, of: target)
                }
            }
            """
        }
    }

    @Test func unlabeledArgumentsAndThrows() {
        assertMacro {
            """
            @DatabaseFunction
            func divide(_ dividend: Int, _ divisor: Int) throws -> Int {
                guard divisor != 0 else { throw DivisionByZero() }
                return dividend / divisor
            }
            """
        } expansion: {
            """
            func divide(_ dividend: Int, _ divisor: Int) throws -> Int {
                guard divisor != 0 else { throw DivisionByZero() }
                return dividend / divisor
            }

            struct __DatabaseFunction_divide: StrataQueries.ScalarDatabaseFunction {
                let name = "divide"
                let body: @Sendable (Int, Int) throws -> Int
                func callAsFunction(_ dividend: some StrataQueries.QueryExpression<Int>, _ divisor: some StrataQueries.QueryExpression<Int>) -> StrataQueries.SQLQueryExpression<Int> {
                    self.call([dividend.queryFragment, divisor.queryFragment])
                }
                var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction("divide", deterministic: false, body)
                }
            }

            var $divide: __DatabaseFunction_divide {
                __DatabaseFunction_divide { (dividend: Int, divisor: Int) in
                    try divide(dividend, divisor)
                }
            }
            """
        }
    }

    @Test func noArguments() {
        assertMacro {
            """
            @DatabaseFunction
            func answer() -> Int { 42 }
            """
        } expansion: {
            """
            func answer() -> Int { 42 }

            struct __DatabaseFunction_answer: StrataQueries.ScalarDatabaseFunction {
                let name = "answer"
                let body: @Sendable () -> Int
                func callAsFunction() -> StrataQueries.SQLQueryExpression<Int> {
                    self.call([])
                }
                var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction("answer", deterministic: false, body)
                }
            }

            var $answer: __DatabaseFunction_answer {
                __DatabaseFunction_answer { () in
                    answer()
                }
            }
            """
        }
    }

    @Test func unnamedParameterAndParameterNamedLikeTheFunction() {
        assertMacro {
            """
            @DatabaseFunction
            func score(_ _: String, score: Int) -> Int { score }
            """
        } expansion: {
            """
            func score(_ _: String, score: Int) -> Int { score }

            struct __DatabaseFunction_score: StrataQueries.ScalarDatabaseFunction {
                let name = "score"
                let body: @Sendable (String, Int) -> Int
                func callAsFunction(_ argument1: some StrataQueries.QueryExpression<String>, score argument2: some StrataQueries.QueryExpression<Int>) -> StrataQueries.SQLQueryExpression<Int> {
                    self.call([argument1.queryFragment, argument2.queryFragment])
                }
                var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction("score", deterministic: false, body)
                }
            }

            var $score: __DatabaseFunction_score {
                __DatabaseFunction_score { (argument1: String, argument2: Int) in
                    score(argument1, score: argument2)
                }
            }
            """
        }
    }

    @Test func representations() {
        assertMacro {
            """
            @DatabaseFunction(as: ((UUID.BytesRepresentation, Int) -> Bool).self)
            func isLucky(_ id: UUID, bonus: Int) -> Bool { id.uuidString.hasPrefix("7") || bonus > 3 }
            """
        } expansion: {
            """
            func isLucky(_ id: UUID, bonus: Int) -> Bool { id.uuidString.hasPrefix("7") || bonus > 3 }

            struct __DatabaseFunction_isLucky: StrataQueries.ScalarDatabaseFunction {
                let name = "isLucky"
                let body: @Sendable (UUID.BytesRepresentation, Int) -> Bool
                func callAsFunction(_ id: some StrataQueries.QueryExpression<UUID.BytesRepresentation>, bonus: some StrataQueries.QueryExpression<Int>) -> StrataQueries.SQLQueryExpression<Bool> {
                    self.call([id.queryFragment, bonus.queryFragment])
                }
                var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction("isLucky", deterministic: false, body)
                }
            }

            var $isLucky: __DatabaseFunction_isLucky {
                __DatabaseFunction_isLucky { (id: UUID.BytesRepresentation, bonus: Int) in
                    isLucky(id.queryOutput, bonus: bonus)
                }
            }
            """
        }
    }

    @Test func representationOfTheResultAndOptionals() {
        assertMacro {
            """
            @DatabaseFunction(as: ((Date.UnixTimeRepresentation?, Int) -> Date.UnixTimeRepresentation?).self)
            func adding(_ date: Date?, days: Int) throws -> Date? {
                date?.addingTimeInterval(Double(days) * 86_400)
            }
            """
        } expansion: {
            """
            func adding(_ date: Date?, days: Int) throws -> Date? {
                date?.addingTimeInterval(Double(days) * 86_400)
            }

            struct __DatabaseFunction_adding: StrataQueries.ScalarDatabaseFunction {
                let name = "adding"
                let body: @Sendable (Date.UnixTimeRepresentation?, Int) throws -> Date.UnixTimeRepresentation?
                func callAsFunction(_ date: some StrataQueries.QueryExpression<Date.UnixTimeRepresentation?>, days: some StrataQueries.QueryExpression<Int>) -> StrataQueries.SQLQueryExpression<Date.UnixTimeRepresentation?> {
                    self.call([date.queryFragment, days.queryFragment])
                }
                var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction("adding", deterministic: false, body)
                }
            }

            var $adding: __DatabaseFunction_adding {
                __DatabaseFunction_adding { (date: Date.UnixTimeRepresentation?, days: Int) in
                    try Optional<Date.UnixTimeRepresentation>(queryOutput: adding(date.queryOutput, days: days))
                }
            }
            """
        }
    }

    @Test func staticFunctionKeepsItsAccessLevel() {
        assertMacro {
            """
            public enum Scoring {
                @DatabaseFunction(isDeterministic: true)
                public static func bonus(for streak: Int) -> Int { streak * 2 }
            }
            """
        } expansion: {
            """
            public enum Scoring {
                public static func bonus(for streak: Int) -> Int { streak * 2 }

                public struct __DatabaseFunction_bonus: StrataQueries.ScalarDatabaseFunction {
                    public let name = "bonus"
                    let body: @Sendable (Int) -> Int
                    public func callAsFunction(for streak: some StrataQueries.QueryExpression<Int>) -> StrataQueries.SQLQueryExpression<Int> {
                        self.call([streak.queryFragment])
                    }
                    public var databaseFunction: StrataSQLite.DatabaseFunction {
                        StrataSQLite.DatabaseFunction("bonus", deterministic: true, body)
                    }
                }

                public static var $bonus: __DatabaseFunction_bonus {
                    __DatabaseFunction_bonus { (streak: Int) in
                        Self.bonus(for: streak)
                    }
                }
            }
            """
        }
    }

    @Test func nonisolatedStaticFunctionInAnExtension() {
        assertMacro {
            """
            extension Game {
                @DatabaseFunction("game_label")
                nonisolated static func label(_ title: String) -> String { title.uppercased() }
            }
            """
        } expansion: {
            """
            extension Game {
                nonisolated static func label(_ title: String) -> String { title.uppercased() }

                struct __DatabaseFunction_label: StrataQueries.ScalarDatabaseFunction {
                    let name = "game_label"
                    let body: @Sendable (String) -> String
                    func callAsFunction(_ title: some StrataQueries.QueryExpression<String>) -> StrataQueries.SQLQueryExpression<String> {
                        self.call([title.queryFragment])
                    }
                    var databaseFunction: StrataSQLite.DatabaseFunction {
                        StrataSQLite.DatabaseFunction("game_label", deterministic: false, body)
                    }
                }

                nonisolated static var $label: __DatabaseFunction_label {
                    __DatabaseFunction_label { (title: String) in
                        Self.label(title)
                    }
                }
            }
            """
        }
    }

    @Test func privateGlobalFunction() {
        assertMacro {
            """
            @DatabaseFunction
            private func slugify(_ title: String, borrowing separator: borrowing String) -> String {
                title.lowercased().replacingOccurrences(of: " ", with: separator)
            }
            """
        } expansion: {
            """
            private func slugify(_ title: String, borrowing separator: borrowing String) -> String {
                title.lowercased().replacingOccurrences(of: " ", with: separator)
            }

            private struct __DatabaseFunction_slugify: StrataQueries.ScalarDatabaseFunction {
                let name = "slugify"
                let body: @Sendable (String, String) -> String
                func callAsFunction(_ title: some StrataQueries.QueryExpression<String>, borrowing separator: some StrataQueries.QueryExpression<String>) -> StrataQueries.SQLQueryExpression<String> {
                    self.call([title.queryFragment, separator.queryFragment])
                }
                var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction("slugify", deterministic: false, body)
                }
            }

            private var $slugify: __DatabaseFunction_slugify {
                __DatabaseFunction_slugify { (title: String, separator: String) in
                    slugify(title, borrowing: separator)
                }
            }
            """
        }
    }

    @Test func backtickedName() {
        assertMacro {
            """
            @DatabaseFunction
            func `default`(_ value: Int?) -> Int { value ?? 0 }
            """
        } expansion: {
            """
            func `default`(_ value: Int?) -> Int { value ?? 0 }

            struct __DatabaseFunction_default: StrataQueries.ScalarDatabaseFunction {
                let name = "default"
                let body: @Sendable (Int?) -> Int
                func callAsFunction(_ value: some StrataQueries.QueryExpression<Int?>) -> StrataQueries.SQLQueryExpression<Int> {
                    self.call([value.queryFragment])
                }
                var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction("default", deterministic: false, body)
                }
            }

            var $default: __DatabaseFunction_default {
                __DatabaseFunction_default { (value: Int?) in
                    `default`(value)
                }
            }
            """
        }
    }

    // MARK: - Diagnostics

    @Test func notAFunction() {
        assertMacro {
            """
            @DatabaseFunction
            var isWinner: Bool = true
            """
        } diagnostics: {
            """
            @DatabaseFunction
            ┬────────────────
            ╰─ 🛑 @DatabaseFunction can only be applied to a function: declare a global or static 'func' that returns a value, and put @DatabaseFunction on it
            var isWinner: Bool = true
            """
        }
    }

    @Test func asyncFunction() {
        assertMacro {
            """
            @DatabaseFunction
            func fetchScore(id: Int) async throws -> Int { id }
            """
        } diagnostics: {
            """
            @DatabaseFunction
            func fetchScore(id: Int) async throws -> Int { id }
                                     ┬────
                                     ╰─ 🛑 'fetchScore' is 'async', but SQLite calls functions synchronously while it runs a statement: remove 'async'
                                        ✏️ Remove 'async'
            """
        } fixes: {
            """
            @DatabaseFunction
            func fetchScore(id: Int) throws -> Int { id }
            """
        } expansion: {
            """
            func fetchScore(id: Int) throws -> Int { id }

            struct __DatabaseFunction_fetchScore: StrataQueries.ScalarDatabaseFunction {
                let name = "fetchScore"
                let body: @Sendable (Int) throws -> Int
                func callAsFunction(id: some StrataQueries.QueryExpression<Int>) -> StrataQueries.SQLQueryExpression<Int> {
                    self.call([id.queryFragment])
                }
                var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction("fetchScore", deterministic: false, body)
                }
            }

            var $fetchScore: __DatabaseFunction_fetchScore {
                __DatabaseFunction_fetchScore { (id: Int) in
                    try fetchScore(id: id)
                }
            }
            """
        }
    }

    @Test func mainActorFunction() {
        assertMacro {
            """
            @DatabaseFunction @MainActor
            func currentScore(id: Int) -> Int { id }
            """
        } diagnostics: {
            """
            @DatabaseFunction @MainActor
                              ┬─────────
                              ╰─ 🛑 'currentScore' is isolated to the main actor, but SQLite calls functions on the thread that runs the statement: remove '@MainActor' (mark it 'nonisolated' inside a main-actor type)
            func currentScore(id: Int) -> Int { id }
            """
        }
    }

    @Test func generatedNamesAvoidTheOtherParameters() {
        assertMacro {
            """
            @DatabaseFunction
            func pick(_ _: Int, argument1: Int) -> Int { argument1 }
            """
        } expansion: {
            """
            func pick(_ _: Int, argument1: Int) -> Int { argument1 }

            struct __DatabaseFunction_pick: StrataQueries.ScalarDatabaseFunction {
                let name = "pick"
                let body: @Sendable (Int, Int) -> Int
                func callAsFunction(_ argument1_: some StrataQueries.QueryExpression<Int>, argument1: some StrataQueries.QueryExpression<Int>) -> StrataQueries.SQLQueryExpression<Int> {
                    self.call([argument1_.queryFragment, argument1.queryFragment])
                }
                var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction("pick", deterministic: false, body)
                }
            }

            var $pick: __DatabaseFunction_pick {
                __DatabaseFunction_pick { (argument1_: Int, argument1: Int) in
                    pick(argument1_, argument1: argument1)
                }
            }
            """
        }
    }

    @Test func genericFunction() {
        assertMacro {
            """
            @DatabaseFunction
            func identity<Value: DatabaseValueConvertible>(_ value: Value) -> Value { value }
            """
        } diagnostics: {
            """
            @DatabaseFunction
            func identity<Value: DatabaseValueConvertible>(_ value: Value) -> Value { value }
                         ┬────────────────────────────────
                         ╰─ 🛑 'identity' is generic, but a SQL function needs concrete argument and result types: replace the generic parameters with concrete types (declare one @DatabaseFunction per type)
            """
        }
    }

    @Test func opaqueParameter() {
        assertMacro {
            """
            @DatabaseFunction
            func describe(_ value: some DatabaseValueConvertible) -> String { "\\(value)" }
            """
        } diagnostics: {
            #"""
            @DatabaseFunction
            func describe(_ value: some DatabaseValueConvertible) -> String { "\(value)" }
                                   ┬────────────────────────────
                                   ╰─ 🛑 parameter 'value' has an opaque 'some' type, which makes the function generic: give it a concrete type such as 'Int' or 'String'
            """#
        }
    }

    @Test func inoutAndVariadicParameters() {
        assertMacro {
            """
            @DatabaseFunction
            func total(_ scores: Int..., into sum: inout Int) -> Int { sum }
            """
        } diagnostics: {
            """
            @DatabaseFunction
            func total(_ scores: Int..., into sum: inout Int) -> Int { sum }
                                                   ┬────────
                                    │              ╰─ 🛑 parameter 'sum' is 'inout', but SQL passes arguments by value: remove 'inout'
                                    │                 ✏️ Remove 'inout'
                                    ┬──
                                    ╰─ 🛑 parameter 'scores' is variadic, but a SQL function takes a fixed number of arguments: declare one parameter per argument
            """
        }
    }

    @Test func noReturnValue() {
        assertMacro {
            """
            @DatabaseFunction
            func log(_ message: String) { print(message) }
            """
        } diagnostics: {
            """
            @DatabaseFunction
            func log(_ message: String) { print(message) }
                    ┬──────────────────
                    ╰─ 🛑 'log' returns no value, but a SQL function must return one: add a return type (return an optional such as 'Int?' and 'nil' for NULL)
            """
        }
        assertMacro {
            """
            @DatabaseFunction
            func log(_ message: String) -> Void { print(message) }
            """
        } diagnostics: {
            """
            @DatabaseFunction
            func log(_ message: String) -> Void { print(message) }
                                        ┬──────
                                        ╰─ 🛑 'log' returns no value, but a SQL function must return one: add a return type (return an optional such as 'Int?' and 'nil' for NULL)
            """
        }
        assertMacro {
            """
            @DatabaseFunction
            func log(_ message: String) -> () { print(message) }
            """
        } diagnostics: {
            """
            @DatabaseFunction
            func log(_ message: String) -> () { print(message) }
                                        ┬────
                                        ╰─ 🛑 'log' returns no value, but a SQL function must return one: add a return type (return an optional such as 'Int?' and 'nil' for NULL)
            """
        }
    }

    @Test func representationNotAFunctionType() {
        assertMacro {
            """
            @DatabaseFunction(as: UUID.BytesRepresentation.self)
            func isLucky(_ id: UUID) -> Bool { true }
            """
        } diagnostics: {
            """
            @DatabaseFunction(as: UUID.BytesRepresentation.self)
                                  ┬────────────────────────────
                                  ╰─ 🛑 'as:' must be a function type written with '.self', giving the stored representation of each argument and of the result, for example 'as: ((UUID.BytesRepresentation, Int) -> Bool).self'
            func isLucky(_ id: UUID) -> Bool { true }
            """
        }
        assertMacro {
            """
            @DatabaseFunction(as: representation)
            func isLucky(_ id: UUID) -> Bool { true }
            """
        } diagnostics: {
            """
            @DatabaseFunction(as: representation)
                                  ┬─────────────
                                  ╰─ 🛑 'as:' must be a function type written with '.self', giving the stored representation of each argument and of the result, for example 'as: ((UUID.BytesRepresentation, Int) -> Bool).self'
            func isLucky(_ id: UUID) -> Bool { true }
            """
        }
    }

    @Test func representationArityMismatch() {
        assertMacro {
            """
            @DatabaseFunction(as: ((UUID.BytesRepresentation) -> Bool).self)
            func isLucky(_ id: UUID, bonus: Int) -> Bool { true }
            """
        } diagnostics: {
            """
            @DatabaseFunction(as: ((UUID.BytesRepresentation) -> Bool).self)
                                  ┬────────────────────────────────────────
                                  ╰─ 🛑 'as:' lists 1 argument type, but 'isLucky' takes 2 parameters: list exactly one representation type per parameter, in order
            func isLucky(_ id: UUID, bonus: Int) -> Bool { true }
            """
        }
    }

    @Test func instanceMethod() {
        assertMacro {
            """
            struct Scoring {
                @DatabaseFunction
                func bonus(for streak: Int) -> Int { streak * 2 }
            }
            """
        } diagnostics: {
            """
            struct Scoring {
                @DatabaseFunction
                func bonus(for streak: Int) -> Int { streak * 2 }
                     ┬────
                     ╰─ 🛑 'bonus' is an instance method, but SQL calls a function without an instance: make it 'static' (or move it to file scope)
                        ✏️ Make it 'static'
            }
            """
        } fixes: {
            """
            struct Scoring {
                @DatabaseFunction
                static func bonus(for streak: Int) -> Int { streak * 2 }
            }
            """
        } expansion: {
            """
            struct Scoring {
                static func bonus(for streak: Int) -> Int { streak * 2 }

                struct __DatabaseFunction_bonus: StrataQueries.ScalarDatabaseFunction {
                    let name = "bonus"
                    let body: @Sendable (Int) -> Int
                    func callAsFunction(for streak: some StrataQueries.QueryExpression<Int>) -> StrataQueries.SQLQueryExpression<Int> {
                        self.call([streak.queryFragment])
                    }
                    var databaseFunction: StrataSQLite.DatabaseFunction {
                        StrataSQLite.DatabaseFunction("bonus", deterministic: false, body)
                    }
                }

                static var $bonus: __DatabaseFunction_bonus {
                    __DatabaseFunction_bonus { (streak: Int) in
                        Self.bonus(for: streak)
                    }
                }
            }
            """
        }
        assertMacro {
            """
            struct Scoring {
                @DatabaseFunction public func bonus(for streak: Int) -> Int { streak * 2 }
            }
            """
        } diagnostics: {
            """
            struct Scoring {
                @DatabaseFunction public func bonus(for streak: Int) -> Int { streak * 2 }
                                              ┬────
                                              ╰─ 🛑 'bonus' is an instance method, but SQL calls a function without an instance: make it 'static' (or move it to file scope)
                                                 ✏️ Make it 'static'
            }
            """
        } fixes: {
            """
            struct Scoring {
                @DatabaseFunction public static func bonus(for streak: Int) -> Int { streak * 2 }
            }
            """
        } expansion: {
            """
            struct Scoring {
                public static func bonus(for streak: Int) -> Int { streak * 2 }

                public struct __DatabaseFunction_bonus: StrataQueries.ScalarDatabaseFunction {
                    public let name = "bonus"
                    let body: @Sendable (Int) -> Int
                    public func callAsFunction(for streak: some StrataQueries.QueryExpression<Int>) -> StrataQueries.SQLQueryExpression<Int> {
                        self.call([streak.queryFragment])
                    }
                    public var databaseFunction: StrataSQLite.DatabaseFunction {
                        StrataSQLite.DatabaseFunction("bonus", deterministic: false, body)
                    }
                }

                public static var $bonus: __DatabaseFunction_bonus {
                    __DatabaseFunction_bonus { (streak: Int) in
                        Self.bonus(for: streak)
                    }
                }
            }
            """
        }
    }

    @Test func protocolRequirement() {
        assertMacro {
            """
            protocol Scoring {
                @DatabaseFunction
                static func bonus(for streak: Int) -> Int
            }
            """
        } diagnostics: {
            """
            protocol Scoring {
                @DatabaseFunction
                ┬────────────────
                ╰─ 🛑 @DatabaseFunction can't be applied to a protocol requirement, which has no body to call: apply it to a global function or a static function of a concrete type
                static func bonus(for streak: Int) -> Int
            }
            """
        }
    }

    @Test func sqlNameNotALiteral() {
        assertMacro {
            """
            @DatabaseFunction(functionName)
            func bonus(for streak: Int) -> Int { streak * 2 }
            """
        } diagnostics: {
            """
            @DatabaseFunction(functionName)
                              ┬───────────
                              ╰─ 🛑 the SQL name must be a string literal without interpolation, for example @DatabaseFunction("is_winner"); omit it to use the Swift name
            func bonus(for streak: Int) -> Int { streak * 2 }
            """
        }
        assertMacro {
            """
            @DatabaseFunction("")
            func bonus(for streak: Int) -> Int { streak * 2 }
            """
        } diagnostics: {
            """
            @DatabaseFunction("")
                              ┬─
                              ╰─ 🛑 the SQL name can't be empty: pass a name, or omit the argument to use the Swift name
            func bonus(for streak: Int) -> Int { streak * 2 }
            """
        }
    }
}
