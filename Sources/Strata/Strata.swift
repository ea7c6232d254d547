// Strata: the umbrella module. Import it alone to get the whole library:
//
// - StrataSQLite: connections, records, the queue and the pool, migrations;
// - StrataObservation: live queries (`observe(in:)`, `@FetchAll`, `@FetchOne`, `@Fetch`);
// - StrataAssets: large binary values stored beside the records that use them;
// - StrataSync: the sync engine;
// - StrataCloud: the cloud contract the engine syncs through, and MockCloud;
// - Dependencies (and through it IssueReporting and Clocks): `@Dependency`,
//   `prepareDependencies`, `withDependencies`, `reportIssue`, `withErrorReporting`.
//
// What this module adds is the dependency container around them: `@Dependency(\.defaultDatabase)`,
// the per-context database of `defaultDatabase(path:configuration:)`, seeding with `db.seed { }`,
// and observation wrappers that read the default database instead of taking one.
@_exported import Dependencies
@_exported import StrataAssets
@_exported import StrataCloud
@_exported import StrataObservation
@_exported import StrataQueries
@_exported import StrataSQLite
@_exported import StrataSync
