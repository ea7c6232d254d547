// StrataAssets: large binary values stored in the same SQLite database as the records that use
// them.
//
// - ``AssetStore`` wraps a `DatabaseWriter` for puts and reads that manage their own
//   transactions; the `Database` extensions (`putAsset`, `assetData`, …) run inside a
//   `write { db in }` so an asset and the record that refers to it commit together.
// - Values are split into chunks, each deflated with the system zlib on its own and checksummed;
//   the whole value is addressed by the SHA-256 of its uncompressed bytes (``AssetID``).
// - Documentation/Assets.md describes the storage format.
import StrataSQLite
