import StrataSQLite

extension SyncEngine {
    /// Whether the engine seals records and assets before they reach the cloud.
    public var isEncrypting: Bool { keyring != nil }

    /// Devices of the signed-in user waiting for the user's keys. Compare each one's
    /// ``DeviceEnrollment/fingerprint`` with what that device shows
    /// (``EncryptionError/enrollmentRequired(user:deviceFingerprint:)``) before approving it.
    public func pendingEnrollments() async throws -> [DeviceEnrollment] {
        try await markedAsEngine {
            try await requireKeyring().pendingEnrollments()
        }
    }

    /// Gives an enrolling device the user's keys, sealed to that device's key: its next sync
    /// opens everything this device can.
    public func approveEnrollment(_ enrollment: DeviceEnrollment) async throws {
        try await markedAsEngine {
            try await requireKeyring().approve(enrollment)
            logger.notice("approved the enrollment of device \(enrollment.fingerprint)")
        }
    }

    /// Escrows the user's keys in the cloud under `passphrase` (scrypt: 32 MiB and about a
    /// tenth of a second per guess), so a new device can enroll itself with it.
    public func setRecoveryPassphrase(_ passphrase: String) async throws {
        try await markedAsEngine {
            try await requireKeyring().setRecoveryPassphrase(passphrase)
        }
    }

    /// Enrolls this device with the user's recovery passphrase.
    ///
    /// - Throws: ``EncryptionError/wrongRecoveryPassphrase(user:)``,
    ///   ``EncryptionError/noRecoveryPassphrase(user:)``.
    public func enroll(recoveryPassphrase passphrase: String) async throws {
        try await markedAsEngine {
            try await requireKeyring().enroll(recoveryPassphrase: passphrase)
        }
    }

    /// Starts the user's encrypted data over from this device, for when every device that held
    /// the keys and the recovery passphrase are lost (CloudKit's `encryptedDataReset`): a new
    /// identity and new zone keys, the user's zones emptied in the cloud (what the lost keys
    /// sealed is unreadable anyway), and every local row sent again. No local row is deleted.
    /// The user's other devices must enroll again.
    public func resetEncryptedData() async throws {
        let keyring = try requireKeyring()
        try await work.run {
            let user = try await self.availableUser()
            let zone = self.defaultZone(for: user)
            let zones = try await self.database.write { db in
                try db.fetchAll(
                    sql: "SELECT DISTINCT zoneName FROM \(MetadatabaseTable.metadata.qualifiedName) WHERE ownerName = ?",
                    arguments: [user]
                ) { row in CloudZoneID(name: try row[0], owner: user) }
            }
            let ownZones = Array(Set(zones + [zone]))
            try await self.unmarkedContainer.privateDatabase.deleteZones(ownZones)
            try await keyring.reset(zones: ownZones)
            // The cloud's view after the deletion, so the next fetch does not take the deleted
            // zones for a reason to delete the rows they held here.
            let fresh = try await self.unmarkedContainer.privateDatabase.fetchDatabaseChanges(since: nil)
            try await self.database.writeWithoutTransaction { db in
                try MetadatabaseTable.forgetFile(in: db)
            }
            try self.prepareSchemaChanges()
            try await self.database.write { db in
                try EngineState.set(EngineState.databaseToken(.private), to: fresh.token.value, in: db)
            }
            self.logger.warning("reset the encrypted data of user \(user): every local row is sent again under new keys")
        }
        try await sendChanges()
    }

    /// Where an engine keeps its keys unless told: a mock cloud simulates a platform keychain
    /// that syncs among the user's devices (one per cloud and user, whatever identifier many
    /// mock clouds share), so previews and tests with several devices need no enrollment; a live cloud's
    /// file database keeps them in a file beside it, and an in-memory database in the process
    /// keychain of its container.
    static func defaultKeyStorage(for location: DatabaseLocation, container: any CloudContainer, user: String) -> KeyStorage {
        if let mock = container.innermostContainer as? MockCloudContainer {
            return .processKeychain(named: "\(container.identifier)#\(mock.cloud.instanceID)#\(user)")
        }
        if let path = location.path { return .file(atPath: path + ".strata-keys") }
        return .processKeychain(named: "\(container.identifier)#\(user)")
    }

    func requireKeyring() throws -> Keyring {
        guard let keyring else { throw SyncEngineError.encryptionDisabled }
        return keyring
    }

    /// Rotates the key of a zone after a participant lost access (removed from a share, or
    /// the share ended), then seals the new version into the zone's other shares.
    func rotateKey(of zone: CloudZoneID, keepingShareOf root: CloudRecordID?) async throws {
        guard let keyring else { return }
        try await keyring.rotate(zone, at: clock.next())
        for other in try await Self.shareRoots(in: zone, database: database) where other != root {
            let share: CloudShare
            do {
                share = try await unmarkedContainer.privateDatabase.fetchShare(rootRecordID: other)
            } catch CloudError.unknownItem {
                continue
            }
            _ = try await cloud.privateDatabase.saveShare(share)
        }
    }

    /// Seals the zone keys into this user's shares for readers who had no public key when the
    /// share was last saved and have one now (they accepted, or their engine ran): one
    /// directory lookup while any reader waits, nothing otherwise.
    /// The shares of the user's own records (owner): every fetch asks, so it is answered from
    /// `metadata_shares`, never by reading every record's metadata.
    static let sharesOfUserSQL = """
        SELECT recordType, recordPrimaryKey, share FROM \(MetadatabaseTable.metadata.qualifiedName)
        WHERE ownerName = ? AND share IS NOT NULL
        """

    func sealKeysForNewReaders(user: String) async throws {
        guard keyring != nil else { return }
        // The writer: the metadatabase is attached there.
        let stored = try await readOnWriter { db in
            try db.fetchAll(
                sql: Self.sharesOfUserSQL,
                arguments: [user]
            ) { row -> (SyncMetadata.ID, CloudShare) in
                (
                    SyncMetadata.ID(recordType: try row[0], recordPrimaryKey: try row[1]),
                    try SyncJSON.decode(CloudShare.self, from: try row[2])
                )
            }
        }
        let waiting = stored.filter { !Self.readersWithoutKeys(of: $0.1).isEmpty }
        guard !waiting.isEmpty else { return }
        let readers = Set(waiting.flatMap { Self.readersWithoutKeys(of: $0.1) })
        let published = Set(try await unmarkedContainer.publicKeys(of: Array(readers).sorted()).keys)
        for (id, share) in waiting where !Self.readersWithoutKeys(of: share).isDisjoint(with: published) {
            let current = try await cloud.privateDatabase.fetchShare(rootRecordID: share.rootRecordID)
            let saved = try await cloud.privateDatabase.saveShare(current)
            try await storeShare(saved, of: id, permission: nil)
            logger.info("sealed the keys of the share of \(id) for participants who published a key since")
        }
    }

    /// The roots of the shares this device knows in `zone`.
    static func shareRoots(in zone: CloudZoneID, database: any DatabaseWriter) async throws -> [CloudRecordID] {
        try await database.write { db in
            try db.fetchAll(
                sql: """
                    SELECT recordName FROM \(MetadatabaseTable.metadata.qualifiedName)
                    WHERE zoneName = ? AND ownerName = ? AND share IS NOT NULL
                    """,
                arguments: [zone.name, zone.owner]
            ) { row in CloudRecordID(name: try row[0], zone: zone) }
        }
    }
}

extension SyncEngine {
    /// Makes sure this device holds the user's keys and the key of their default zone: what
    /// the first sync does anyway. Call it to learn early that this device must be enrolled
    /// (``EncryptionError/enrollmentRequired(user:deviceFingerprint:)``).
    public func prepareEncryption() async throws {
        try await markedAsEngine {
            guard let keyring else { return }
            let user = try await availableUser()
            _ = try await keyring.currentKey(for: defaultZone(for: user))
        }
    }

    /// Forgets the keys held in memory, so the next use reads the key storage again.
    package func forgetKeysInMemory() { keyring?.forgetKeysInMemory() }

    /// A record as the cloud holds it, opened with this device's keys (unchanged when the
    /// engine does not encrypt): for tests and tools that read a cloud directly.
    package func openCloudRecord(_ record: CloudRecord) async throws -> CloudRecord {
        guard let keyring else { return record }
        guard let version = RecordSealing.keyVersion(of: record) else { throw EncryptionError.unsealedRecord(record.id) }
        return try RecordSealing.open(record, with: try await keyring.key(for: record.id.zone, version: version))
    }

    /// A record sealed as this engine would send it: for tests that write to a cloud directly.
    package func sealForCloud(_ record: CloudRecord) async throws -> CloudRecord {
        guard let keyring else { return record }
        return try RecordSealing.seal(record, with: try await keyring.currentKey(for: record.id.zone))
    }

    /// The name the cloud knows content `hash` of `zone` by.
    package func cloudAssetName(ofContent hash: String, in zone: CloudZoneID) async throws -> String {
        guard let keyring else { return hash }
        return AssetSealing.name(ofContent: hash, with: try await keyring.currentKey(for: zone))
    }
}
