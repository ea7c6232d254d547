extension SyncEngine {
    /// The signed-in user, checked to be available.
    ///
    /// - Throws: ``SyncEngineError/accountUnavailable(_:)`` when the account cannot sync.
    ///
    /// Notices account changes: a sign-out (the account has no user any more) or a switch (another
    /// user than the one the local data came from) goes to the delegate, or by default deletes
    /// the local data.
    func availableUser() async throws -> String {
        let account = try await unmarkedContainer.account()
        let status = account.status
        let known = try await readOnWriter { db in try EngineState.value(EngineState.userName, in: db) }
        guard status == .available else {
            if status == .noAccount, let known {
                try await accountChanged(.signedOut(previousUser: known))
                try await database.write { db in try EngineState.set(EngineState.userName, to: nil, in: db) }
            }
            throw SyncEngineError.accountUnavailable(status)
        }
        guard let user = account.user else { throw CloudError.notAuthenticated }
        if known != user {
            if let known { try await accountChanged(.switched(from: known, to: user)) }
            try await database.write { db in try EngineState.set(EngineState.userName, to: user, in: db) }
        }
        return user
    }

    private func accountChanged(_ change: SyncAccountChange) async throws {
        logger.notice("account changed: \(change)")
        // Keys belong to a user: the next one's come from their own keychain.
        keyring?.forgetUser()
        if let delegate {
            // The app's code: what it writes is its own, captured and sent, not the engine's.
            await SynchronizationContext.$isSynchronizing.withValue(false) {
                await delegate.syncEngine(self, accountChanged: change)
            }
        } else {
            try await performDeleteLocalData()
        }
    }

    /// The private database's zone for `user`.
    func defaultZone(for user: String) -> CloudZoneID {
        CloudZoneID(name: configuration.zoneName, owner: user)
    }
}
