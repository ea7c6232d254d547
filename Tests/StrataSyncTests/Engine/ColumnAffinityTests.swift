import Testing

@testable import StrataSync

/// The affinity rules of section 3.1 of "Datatypes In SQLite", in their order, on declared
/// types as apps write them (any case, with sizes and extra words).
@Suite(.timeLimit(.minutes(1)))
struct ColumnAffinityTests {
    @Test(arguments: [
        ("INTEGER", ColumnAffinity.integer), ("int", .integer), ("BigInt", .integer), ("CHARINT", .integer),
        ("VARCHAR(10)", .text), ("nchar", .text), ("clob", .text), ("Text", .text),
        ("", .blob), ("blob", .blob), ("REAL", .real), ("double precision", .real), ("Float", .real),
        ("NUMERIC", .numeric), ("DECIMAL(10,5)", .numeric), ("BOOLEAN", .numeric), ("DATETIME", .numeric),
        // The documented surprise: "POINT" holds "INT".
        ("point", .integer), ("FLOATING POINT", .integer),
        ("I", .numeric), ("IN", .numeric), ("FLOA", .real), ("FLO", .numeric),
    ])
    func declaredTypesGetSQLitesAffinity(_ declared: String, _ affinity: ColumnAffinity) {
        #expect(ColumnAffinity(declaredType: declared) == affinity, "\(declared)")
    }
}
