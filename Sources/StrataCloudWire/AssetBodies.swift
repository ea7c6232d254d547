import StrataCloud

/// The body of `missingAssets`.
public struct MissingAssetsRequest: Codable, Sendable, Hashable {
    /// Content hashes the client holds.
    public var hashes: [String]

    /// A request asking about `hashes`.
    public init(hashes: [String]) {
        self.hashes = hashes
    }
}

/// The response of `missingAssets`.
public struct MissingAssetsResponse: Codable, Sendable, Hashable {
    /// The hashes the cloud does not hold, sorted.
    public var missing: [String]

    /// The wire form of a set of hashes.
    public init(missing: Set<String>) {
        self.missing = missing.sorted()
    }
}

/// The body of `uploadAssets`.
public struct UploadAssetsRequest: Codable, Sendable, Hashable {
    /// The assets, with their stored chunks (base64 in JSON).
    public var assets: [CloudAsset]

    /// A request uploading `assets`.
    public init(assets: [CloudAsset]) {
        self.assets = assets
    }
}

/// The body of `fetchAsset`; the response is the `CloudAsset`.
public struct FetchAssetRequest: Codable, Sendable, Hashable {
    /// The asset's content hash.
    public var hash: String

    /// A request for the asset with `hash`.
    public init(hash: String) {
        self.hash = hash
    }
}
