import StrataMacros
import SwiftSyntaxMacros

/// The macros a `@Table` expansion involves, shared by every suite that expands one.
let tableMacroSpecs: [String: any Macro.Type] = [
    "Table": TableMacro.self, "Column": ColumnMacro.self, "Ephemeral": EphemeralMacro.self, "Selection": SelectionMacro.self,
]
