extension CloudShare {
    /// The most ``wrappedKeys`` entries a cloud stores for one share.
    public static let maximumWrappedKeys = 1_000
    /// The most bytes of ``wrappedKeys`` a cloud stores for one share: each entry's name in
    /// UTF-8 plus its data.
    public static let maximumWrappedKeyBytes = 256 * 1024

    /// The bytes ``wrappedKeys`` occupies, counted as ``maximumWrappedKeyBytes`` counts them.
    public var wrappedKeyBytes: Int {
        wrappedKeys.reduce(0) { $0 + $1.key.utf8.count + $1.value.count }
    }

    /// The check every cloud makes of a saved share's ``wrappedKeys``: more than
    /// ``maximumWrappedKeys`` entries or ``maximumWrappedKeyBytes`` bytes fail the save with
    /// ``CloudError/limitExceeded``, and nothing of it is stored.
    package func checkWrappedKeys() throws(CloudError) {
        guard wrappedKeys.count <= Self.maximumWrappedKeys, wrappedKeyBytes <= Self.maximumWrappedKeyBytes else {
            throw .limitExceeded
        }
    }
}
