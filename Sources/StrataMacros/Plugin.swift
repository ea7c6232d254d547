import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct StrataMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        TableMacro.self,
        ColumnMacro.self,
        EphemeralMacro.self,
        SelectionMacro.self,
        DatabaseFunctionMacro.self,
        SQLMacro.self,
    ]
}
