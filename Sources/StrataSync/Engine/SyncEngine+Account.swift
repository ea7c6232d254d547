extension SyncEngine {
    /// The signed-in user, checked to be available.
    ///
    /// - Throws: ``SyncEngineError/accountUnavailable(_:)`` when the account cannot sync.
    func availableUser() async throws -> String {
        let status = try await container.accountStatus()
        guard status == .available else { throw SyncEngineError.accountUnavailable(status) }
        return try await container.currentUser()
    }

    /// The private database's zone for `user`.
    func defaultZone(for user: String) -> CloudZoneID {
        CloudZoneID(name: configuration.zoneName, owner: user)
    }
}
