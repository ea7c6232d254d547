// The cloud contract (CloudContainer, CloudDatabase, their values and rules, MockCloud) lives in
// StrataCloud, which the cloud service and its client use without the engine; re-exported so
// `import StrataSync` alone gives the engine and the clouds it syncs through.
@_exported import StrataCloud
