import Foundation
import PostgresNIO
import StrataCloud

extension CloudStoreDatabase {
    /// The hashes among `hashes` the user cannot read: neither they nor a user they share
    /// with (either way round) uploaded the content. Row-level security decides.
    public func missingAssets(_ hashes: [String]) async throws -> Set<String> {
        let (user, logger) = (user, logger)
        return try await store.transaction(as: user) { connection in
            var held: Set<String> = []
            for try await hash in try await connection.query(
                "SELECT DISTINCT hash FROM strata_cloud.assets WHERE hash = ANY(\(hashes))", logger: logger
            ).decode(String.self) {
                held.insert(hash)
            }
            return Set(hashes).subtracting(held)
        }
    }

    /// Stores assets whole or not at all: each must match its size, its chunk checksums and,
    /// decoded, its SHA-256 (`CloudError.invalidAsset(_:reason:)`), so no upload
    /// can stand for another content. A sealed asset (every chunk sealed) skips the SHA-256
    /// check, which its keyed name cannot pass; one mixing sealed and unsealed chunks is refused. Content the user can already read is skipped; what is
    /// stored counts its stored bytes against the uploader's quota
    /// (`CloudError.quotaExceeded`).
    public func uploadAssets(_ assets: [CloudAsset]) async throws {
        for asset in assets {
            if let damage = asset.damage { throw CloudError.invalidAsset(asset.hash, reason: damage) }
        }
        let (user, logger, quota) = (user, logger, store.limits.maximumBytesPerUser)
        let readable = try await missingAssets(assets.map(\.hash)).symmetricDifference(assets.map(\.hash))
        // A sealed asset's name is a keyed hash of content the store cannot read: only its
        // chunks' sizes and checksums (`damage`) can be checked.
        for asset in assets where !readable.contains(asset.hash) && !asset.isSealed {
            if let mismatch = await AssetContentCheck.mismatch(of: asset) { throw CloudError.invalidAsset(asset.hash, reason: mismatch) }
        }
        // Each asset's row is locked as it is inserted, and the owner's user row when the bytes
        // are counted: the assets in the order of their hashes' bytes, the user row once, last.
        // (Counted asset by asset, an upload held the user row while it asked for its next
        // asset, and two uploads sharing an asset deadlocked.)
        let unread = assets.filter { !readable.contains($0.hash) }.sorted { $0.hash.utf8.lexicographicallyPrecedes($1.hash.utf8) }
        try await store.transaction(as: user) { connection in
            try await Self.ensureUser(user, on: connection, logger: logger)
            var stored: Int64 = 0
            // Content the user can read already (theirs, or a peer's) is not stored again.
            for asset in unread {
                let inserted = try await connection.query(
                    """
                    INSERT INTO strata_cloud.assets (owner, hash, size, chunk_size) VALUES (\(user), \(asset.hash), \(asset.size), \(asset.chunkSize))
                    ON CONFLICT (owner, hash) DO NOTHING RETURNING hash
                    """,
                    logger: logger)
                var isNew = false
                for try await _ in inserted.decode(String.self) { isNew = true }
                guard isNew else { continue }
                for (index, chunk) in asset.chunks.enumerated() {
                    try await connection.perform(
                        """
                        INSERT INTO strata_cloud.asset_chunks (owner, hash, index, encoding, size, crc32, data)
                        VALUES (\(user), \(asset.hash), \(index), \(chunk.encoding), \(chunk.size), \(Int64(chunk.crc32)), \(chunk.data))
                        """,
                        logger: logger)
                }
                stored += Int64(asset.storedSize)
            }
            if stored > 0 { try await Self.useBytes(stored, of: user, quota: quota, on: connection, logger: logger) }
        }
    }

    /// An asset's content, as uploaded, when the user can read it: their own upload first, else
    /// a peer's.
    public func fetchAsset(_ hash: String) async throws -> CloudAsset {
        let (user, logger) = (user, logger)
        return try await store.transaction(as: user, repeatableRead: true) { connection in
            var header: (String, Int64, Int64)?
            for try await row in try await connection.query(
                """
                SELECT owner, size, chunk_size FROM strata_cloud.assets WHERE hash = \(hash)
                ORDER BY owner = \(user) DESC, owner LIMIT 1
                """,
                logger: logger
            ).decode((String, Int64, Int64).self) {
                header = row
            }
            guard let (owner, size, chunkSize) = header else { throw CloudError.assetNotFound(hash) }
            var chunks: [CloudAsset.Chunk] = []
            for try await (encoding, chunkSizeValue, crc, data) in try await connection.query(
                "SELECT encoding, size, crc32, data FROM strata_cloud.asset_chunks WHERE owner = \(owner) AND hash = \(hash) ORDER BY index",
                logger: logger
            ).decode((Int, Int64, Int64, Data).self) {
                chunks.append(
                    CloudAsset.Chunk(data: data, encoding: encoding, size: chunkSizeValue, crc32: UInt32(truncatingIfNeeded: crc)))
            }
            return CloudAsset(hash: hash, size: size, chunkSize: chunkSize, chunks: chunks)
        }
    }
}
