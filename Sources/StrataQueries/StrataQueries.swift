// StrataQueries is built on StrataSQLite's connections and records, and the code `@Table`
// generates names its types: importing StrataQueries alone is enough.
@_exported import StrataSQLite
