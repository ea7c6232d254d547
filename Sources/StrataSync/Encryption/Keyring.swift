import Crypto
import Foundation
import Logging
import StrataCloud
import Synchronization

/// The keys one engine seals and opens with: the user's identity, the zone keys, and the
/// records in the user's key zone (`strata.keys`, in their private database) that carry them
/// between the user's devices.
///
/// The key zone holds, all readable by the operator but useless without a private key:
/// - `identity`: the user's public key, and (with a recovery passphrase) their private key
///   sealed under scrypt of the passphrase;
/// - `zone.<zone>.<version>`: each zone key version, sealed (HPKE) to the user's public key,
///   with the time the next version retired it;
/// - `enroll.<fingerprint>`: a device asking for the user's keys, with its enrollment public key;
/// - `grant.<fingerprint>`: the user's private key sealed to that device by one that approved it.
///
/// Shared zones' keys come from their shares (``CloudShare/wrappedKeys``), sealed by the owner
/// to each participant's public key.
///
/// Reads of keys already held take a lock and no I/O; anything that goes to the cloud or the
/// key storage runs one at a time, so two seals never create two first keys of one zone.
final class Keyring: Sendable {
    static let zoneName = "strata.keys"
    static let identityName = "identity"
    static let recordType = "strata.key"

    /// Where the keys live, once the signed-in user is known (a keychain is one user's).
    private let storageOfUser: @Sendable (String) -> KeyStorage
    private let resolvedStorage = Mutex<KeyStorage?>(nil)
    let container: any CloudContainer
    let recoveryPassphrase: String?
    let logger: Logger
    private let work = SerialWork()
    private let vault = Mutex<KeyVault?>(nil)
    /// Zones whose keys were compared with the cloud's during this engine's life.
    private let checkedZones = Mutex<Set<CloudZoneID>>([])
    private let checkedUsers = Mutex<Set<String>>([])
    /// The roots of shares this device knows in a zone (from the metadatabase).
    let shareRoots = Mutex<(@Sendable (CloudZoneID) async throws -> [CloudRecordID])?>(nil)

    init(
        storage: @escaping @Sendable (String) -> KeyStorage, container: any CloudContainer, recoveryPassphrase: String?, logger: Logger
    ) {
        storageOfUser = storage
        self.container = container
        self.recoveryPassphrase = recoveryPassphrase
        self.logger = logger
    }

    /// The signed-in user, as the container last heard for its token (`CloudContainer/account()`):
    /// the engine asks before every send and fetch, so asking again here cost a round trip a
    /// key looked up (issue #27: two of the requests before a first upload's first batch, one
    /// before a new device's first page).
    private func signedInUser() async throws -> String {
        let account = try await container.account()
        guard account.status == .available, let user = account.user else { throw CloudError.notAuthenticated }
        return user
    }

    // MARK: Keys to seal and open with

    /// The key new records of `zone` are sealed with.
    func currentKey(for zone: CloudZoneID) async throws -> ZoneKey {
        if checkedZones.withLock({ $0.contains(zone) }), let key = vault.withLock({ $0?.keys(of: zone).current }) { return key }
        return try await work.run { try await self.resolveCurrentKey(for: zone) }
    }

    /// The key that opens `zone`'s records sealed at `version`; `candidates` are records that
    /// may be shared roots (for a shared zone whose key came with a share not seen yet).
    func key(for zone: CloudZoneID, version: Int, candidates: [CloudRecordID] = []) async throws -> ZoneKey {
        if let key = vault.withLock({ $0?.keys(of: zone).versions[version] }) { return key }
        return try await work.run {
            if let key = try await self.loadedVault().keys(of: zone).versions[version] { return key }
            let user = try await self.signedInUser()
            if zone.owner == user {
                try await self.refreshOwnKeys(user: user)
            } else {
                let known = try await self.shareRoots.withLock({ $0 })?(zone) ?? []
                for root in Set(known + candidates) { try await self.ingestShare(of: root, user: user) }
            }
            guard let key = try await self.loadedVault().keys(of: zone).versions[version] else {
                throw EncryptionError.missingZoneKey(zone, version: version)
            }
            return key
        }
    }

    /// Takes the keys `share` carries for the current user (and, with the link key of a share
    /// URL, those it carries for whoever holds the link).
    func ingest(_ share: CloudShare, link: LinkKey? = nil) async throws {
        try await work.run {
            let user = try await self.signedInUser()
            try await self.ingest(share, user: user, link: link)
        }
    }

    /// Forgets every key held in memory: the next use reads the key storage again (a test
    /// simulates a device that lost its keychain by emptying the storage, then calling this).
    func forgetKeysInMemory() {
        vault.withLock { $0 = nil }
        checkedZones.withLock { $0.removeAll() }
        checkedUsers.withLock { $0.removeAll() }
    }

    /// Forgets the keys in memory and which storage holds them: the signed-in user changed,
    /// and a keychain is one user's.
    func forgetUser() {
        forgetKeysInMemory()
        resolvedStorage.withLock { $0 = nil }
    }

    /// Makes the next seal in each zone check the cloud for a newer key version first, at
    /// most once per ``recheckInterval``: a send begins with it, so a key another device
    /// rotated is not used for long after the rotation (well within the grace a retired key
    /// has, ``RecordSealing/retirementGrace``), and a burst of sends pays for one check.
    func recheckCurrentKeys(now milliseconds: Int64) {
        let due = lastRecheck.withLock { last in
            guard milliseconds - last >= Self.recheckInterval || milliseconds < last else { return false }
            last = milliseconds
            return true
        }
        if due { checkedZones.withLock { $0.removeAll() } }
    }

    /// One minute, in milliseconds.
    static let recheckInterval: Int64 = 60 * 1000
    private let lastRecheck = Mutex<Int64>(0)
    private let knownPublicKeys = Mutex<[String: Curve25519.KeyAgreement.PublicKey]>([:])

    // MARK: Identity

    /// The user's private key, creating the user's identity when they have none anywhere.
    ///
    /// - Throws: ``EncryptionError/enrollmentRequired(user:deviceFingerprint:)`` when the user
    ///   has one this device cannot get (no approval yet, no passphrase).
    func identity(of user: String) async throws -> Curve25519.KeyAgreement.PrivateKey {
        if checkedUsers.withLock({ $0.contains(user) }), let identity = vault.withLock({ $0?.identity(of: user) }) { return identity }
        return try await work.run { try await self.resolveIdentity(of: user) }
    }

    private func resolveIdentity(of user: String) async throws -> Curve25519.KeyAgreement.PrivateKey {
        let stored = try await fetchKeyRecord(Self.identityName, user: user)
        let published = stored.flatMap { record -> Data? in
            if case .bytes(let key) = record.fields["publicKey"] { return key }
            return nil
        }
        if let identity = try await loadedVault().identity(of: user) {
            guard let published else {
                try await publish(identity, user: user, replacing: stored)
                return identity
            }
            guard published == identity.publicKey.rawRepresentation else {
                // The user reset their keys on another device: these no longer open anything new.
                throw EncryptionError.enrollmentRequired(user: user, deviceFingerprint: try await enrollmentFingerprint(user: user))
            }
            try await ensureDirectory(has: identity, user: user)
            checkedUsers.withLock { _ = $0.insert(user) }
            return identity
        }
        guard let stored, let published else {
            let identity = Curve25519.KeyAgreement.PrivateKey()
            try await publish(identity, user: user, replacing: nil)
            return identity
        }
        if let passphrase = recoveryPassphrase, case .bytes(let envelope) = stored.fields["recovery"] {
            guard let raw = KeyWrapping.open(envelope, passphrase: passphrase, context: Self.recoveryContext(user)),
                let identity = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw),
                identity.publicKey.rawRepresentation == published
            else { throw EncryptionError.wrongRecoveryPassphrase(user: user) }
            try await keep(identity, user: user)
            logger.notice("enrolled this device with user \(user)'s recovery passphrase")
            return identity
        }
        let enrollment = try await enrollmentKey()
        let fingerprint = enrollment.publicKey.fingerprint
        if let grant = try await fetchKeyRecord("grant.\(fingerprint)", user: user), case .bytes(let sealed) = grant.fields["key"],
            let approver = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: published),
            let raw = KeyWrapping.open(sealed, with: enrollment, from: approver, context: Self.grantContext(user, fingerprint)),
            let identity = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw),
            identity.publicKey.rawRepresentation == published
        {
            try await keep(identity, user: user)
            logger.notice("enrolled this device (\(fingerprint)) with user \(user)'s keys, approved by another device")
            return identity
        }
        if try await fetchKeyRecord("enroll.\(fingerprint)", user: user) == nil {
            let request = CloudRecord(
                id: keyRecordID("enroll.\(fingerprint)", user: user), type: Self.recordType,
                fields: ["publicKey": .bytes(enrollment.publicKey.rawRepresentation)])
            try await saveKeyRecords([request], user: user)
        }
        logger.warning("this device (\(fingerprint)) waits to be enrolled with user \(user)'s keys")
        throw EncryptionError.enrollmentRequired(user: user, deviceFingerprint: fingerprint)
    }

    /// Saves `identity` as the user's, in the key zone, the directory and this device.
    private func publish(_ identity: Curve25519.KeyAgreement.PrivateKey, user: String, replacing stored: CloudRecord?) async throws {
        var record =
            stored ?? CloudRecord(id: keyRecordID(Self.identityName, user: user), type: Self.recordType)
        record.fields["publicKey"] = .bytes(identity.publicKey.rawRepresentation)
        if let passphrase = recoveryPassphrase {
            record.fields["recovery"] = .bytes(
                try KeyWrapping.seal(identity.rawRepresentation, passphrase: passphrase, context: Self.recoveryContext(user)))
        } else {
            record.fields["recovery"] = nil
        }
        // Kept before it is published: a save whose answer is lost must not leave the cloud with
        // an identity no device holds.
        try await keep(identity, user: user)
        checkedUsers.withLock { _ = $0.remove(user) }
        try await saveKeyRecords([record], user: user)
        try await container.publishPublicKey(identity.publicKey.rawRepresentation)
        checkedUsers.withLock { _ = $0.insert(user) }
    }

    private func ensureDirectory(has identity: Curve25519.KeyAgreement.PrivateKey, user: String) async throws {
        let listed = try await container.publicKeys(of: [user])[user]
        if listed != identity.publicKey.rawRepresentation {
            try await container.publishPublicKey(identity.publicKey.rawRepresentation)
        }
    }

    private func keep(_ identity: Curve25519.KeyAgreement.PrivateKey, user: String) async throws {
        try await updateVault { $0.identities[user] = identity.rawRepresentation }
        checkedUsers.withLock { _ = $0.insert(user) }
    }

    func enrollmentKey() async throws -> Curve25519.KeyAgreement.PrivateKey {
        if let raw = try await loadedVault().enrollmentKey, let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw) {
            return key
        }
        let key = Curve25519.KeyAgreement.PrivateKey()
        try await updateVault { $0.enrollmentKey = key.rawRepresentation }
        return key
    }

    private func enrollmentFingerprint(user: String) async throws -> String {
        try await enrollmentKey().publicKey.fingerprint
    }

    static func recoveryContext(_ user: String) -> String { "strata.recovery.1|\(user)" }
    static func grantContext(_ user: String, _ fingerprint: String) -> String { "strata.grant.1|\(user)|\(fingerprint)" }
    static func zoneKeyContext(_ zone: CloudZoneID, version: Int, recipient: String) -> String {
        "strata.zone-key.1|\(zone.owner)|\(zone.name)|\(version)|\(recipient)"
    }

    // MARK: Own zones

    private func resolveCurrentKey(for zone: CloudZoneID) async throws -> ZoneKey {
        let user = try await signedInUser()
        guard zone.owner == user else {
            if let key = try await loadedVault().keys(of: zone).current { return key }
            let known = try await shareRoots.withLock({ $0 })?(zone) ?? []
            for root in known { try await ingestShare(of: root, user: user) }
            guard let key = try await loadedVault().keys(of: zone).current else {
                throw EncryptionError.missingZoneKey(zone, version: 0)
            }
            return key
        }
        try await refreshOwnKeys(user: user)
        if let key = try await loadedVault().keys(of: zone).current {
            checkedZones.withLock { _ = $0.insert(zone) }
            return key
        }
        let key = ZoneKey.random(version: 1)
        if try await saveZoneKeys([key], of: zone, user: user) {
            checkedZones.withLock { _ = $0.insert(zone) }
            return key
        }
        // Another device created the zone's first key at the same time: theirs is the key.
        try await refreshOwnKeys(user: user)
        guard let current = try await loadedVault().keys(of: zone).current else { throw EncryptionError.missingZoneKey(zone, version: 1) }
        checkedZones.withLock { _ = $0.insert(zone) }
        return current
    }

    /// Reads every zone key in the key zone this device can open into the vault, and saves to
    /// the key zone those this device holds and the cloud lacks.
    private func refreshOwnKeys(user: String) async throws {
        let identity = try await resolveIdentityIfNeeded(user: user)
        let records = try await allKeyRecords(user: user)
        var cloudVersions: [CloudZoneID: Set<Int>] = [:]
        var found: [(CloudZoneID, ZoneKey)] = []
        for record in records {
            guard let (zone, version) = Self.zoneKeyName(record.id.name, user: user) else { continue }
            cloudVersions[zone, default: []].insert(version)
            guard case .bytes(let sealed) = record.fields["key"],
                let payload = KeyWrapping.open(
                    sealed, with: identity, from: identity.publicKey, context: Self.zoneKeyContext(zone, version: version, recipient: user)),
                let key = ZoneKey(version: version, payload: payload)
            else { continue }
            found.append((zone, key))
        }
        let opened = found
        if !opened.isEmpty { try await updateVault { vault in for (zone, key) in opened { vault.insert(key, of: zone) } } }
        // Keys this device holds that never reached the cloud (kept in a process keychain
        // shared with another cloud, say) go there, so the user's other devices find them.
        let held = try await loadedVault()
        for (name, versions) in held.zoneKeys {
            guard let zone = KeyVault.zone(ofKey: name), zone.owner == user else { continue }
            let missing = held.keys(of: zone).versions.values.filter { !(cloudVersions[zone]?.contains($0.version) ?? false) }
            guard !missing.isEmpty, !versions.isEmpty else { continue }
            _ = try await saveZoneKeys(missing, of: zone, user: user)
        }
    }

    private func resolveIdentityIfNeeded(user: String) async throws -> Curve25519.KeyAgreement.PrivateKey {
        if checkedUsers.withLock({ $0.contains(user) }), let identity = vault.withLock({ $0?.identity(of: user) }) { return identity }
        return try await resolveIdentity(of: user)
    }

    /// Saves zone keys to the key zone, sealed to the user's public key; false when one of
    /// them exists there already (another device made it).
    @discardableResult
    func saveZoneKeys(_ keys: [ZoneKey], of zone: CloudZoneID, user: String) async throws -> Bool {
        let identity = try await resolveIdentityIfNeeded(user: user)
        let records = try keys.map { key in
            CloudRecord(
                id: keyRecordID("zone.\(zone.name).\(key.version)", user: user), type: Self.recordType,
                fields: [
                    "key": .bytes(
                        try KeyWrapping.seal(
                            key.sealedPayload, to: identity.publicKey, from: identity,
                            context: Self.zoneKeyContext(zone, version: key.version, recipient: user)))
                ])
        }
        guard try await saveKeyRecords(records, user: user) else { return false }
        try await updateVault { vault in for key in keys { vault.insert(key, of: zone) } }
        return true
    }

    static func zoneKeyName(_ name: String, user: String) -> (CloudZoneID, Int)? {
        guard name.hasPrefix("zone."), let dot = name.lastIndex(of: "."), let version = Self.version(name[name.index(after: dot)...])
        else { return nil }
        // "zone.3": the last dot is the prefix's own, before where a zone name would start.
        let zoneStart = name.index(name.startIndex, offsetBy: 5)
        guard dot > zoneStart else { return nil }
        let zoneName = String(name[zoneStart..<dot])
        return (CloudZoneID(name: zoneName, owner: user), version)
    }

    // MARK: Shares

    private func ingestShare(of root: CloudRecordID, user: String) async throws {
        let share: CloudShare
        do {
            share = try await container.sharedDatabase.fetchShare(rootRecordID: root)
        } catch CloudError.unknownItem {
            return
        }
        try await ingest(share, user: user)
    }

    private func ingest(_ share: CloudShare, user: String, link: LinkKey? = nil) async throws {
        let zone = share.rootRecordID.zone
        guard zone.owner != user, !share.wrappedKeys.isEmpty else { return }
        let identity = try await resolveIdentityIfNeeded(user: user)
        var found: [ZoneKey] = []
        if let link {
            for (name, sealed) in share.wrappedKeys {
                guard let (version, recipient, _) = Self.shareEntry(name), recipient.isEmpty,
                    let payload = try? ChaChaPoly.open(
                        ChaChaPoly.SealedBox(combined: sealed), using: link.secret,
                        authenticating: Data(Self.linkContext(share.rootRecordID, version: version).utf8)),
                    let key = ZoneKey(version: version, payload: payload)
                else { continue }
                found.append(key)
            }
        }
        // Sealed by the owner: opened only with the owner's published key, so nobody else (the
        // operator) can hand this user a zone key of their own making.
        let ownerKey = try await publicKey(of: zone.owner)
        for (name, sealed) in share.wrappedKeys {
            guard let ownerKey, let (version, recipient, _) = Self.shareEntry(name), recipient == user,
                let payload = KeyWrapping.open(
                    sealed, with: identity, from: ownerKey, context: Self.zoneKeyContext(zone, version: version, recipient: user)),
                let key = ZoneKey(version: version, payload: payload)
            else { continue }
            found.append(key)
        }
        let opened = found
        guard !opened.isEmpty else { return }
        try await updateVault { vault in for key in opened { vault.insert(key, of: zone) } }
    }

    /// A share's entry name: `<version>:<recipient>` or `<version>:<recipient>:<retiredAt>`.
    static func shareEntry(_ name: String) -> (Int, String, HybridTimestamp?)? {
        let parts = name.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 2, let version = Self.version(parts[0]) else { return nil }
        return (version, parts[1], parts.count == 3 ? HybridTimestamp(parts[2]) : nil)
    }

    /// A key version written in a name: decimal digits only (no sign: versions start at 1,
    /// and a negative one would trap where it is written as a UInt32).
    static func version(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }

    /// `share` with every key version of its zone sealed for each participant who may read it
    /// and published a key (others are logged, and get theirs when the share is saved again).
    func sealKeys(into share: CloudShare) async throws -> CloudShare {
        let zone = share.rootRecordID.zone
        _ = try await currentKey(for: zone)
        let keys = try await loadedVault().keys(of: zone).versions.values.sorted { $0.version < $1.version }
        let readers = share.participants.filter { $0.user != share.owner && $0.acceptance != .removed && $0.permission > .none }
            .map(\.user)
        var sealed = share
        sealed.wrappedKeys = [:]
        // Every version for whoever holds the URL's link key (derived from the current version,
        // so someone removed before a rotation cannot open what is sealed after it).
        if let current = keys.last {
            let secret = Self.linkSecret(current, root: share.rootRecordID)
            for key in keys {
                let name = "\(key.version):"
                sealed.wrappedKeys[name] =
                    try ChaChaPoly.seal(
                        key.sealedPayload, using: secret,
                        authenticating: Data(Self.linkContext(share.rootRecordID, version: key.version).utf8)
                    ).combined
            }
        }
        guard !readers.isEmpty else { return sealed }
        let ownerIdentity = try await identity(of: share.owner)
        let published = try await container.publicKeys(of: readers)
        for reader in readers {
            guard let raw = published[reader], let publicKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: raw) else {
                logger.notice(
                    "participant \(reader) of the share of \(share.rootRecordID) has no public key yet: they get the key when the share is saved again"
                )
                continue
            }
            for key in keys {
                let name = "\(key.version):\(reader)"
                sealed.wrappedKeys[name] = try KeyWrapping.seal(
                    key.sealedPayload, to: publicKey, from: ownerIdentity,
                    context: Self.zoneKeyContext(zone, version: key.version, recipient: reader))
            }
        }
        return sealed
    }

    /// The link key of a share's URL: derived from the zone's current key and the root.
    func linkKey(for root: CloudRecordID) async throws -> LinkKey {
        let key = try await currentKey(for: root.zone)
        return LinkKey(version: key.version, secret: Self.linkSecret(key, root: root))
    }

    /// A user's published public key, looked up once per engine.
    private func publicKey(of user: String) async throws -> Curve25519.KeyAgreement.PublicKey? {
        if let known = knownPublicKeys.withLock({ $0[user] }) { return known }
        guard let raw = try await container.publicKeys(of: [user])[user],
            let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: raw)
        else { return nil }
        knownPublicKeys.withLock { $0[user] = key }
        return key
    }

    static func linkSecret(_ key: ZoneKey, root: CloudRecordID) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key.key, salt: Data("strata.link.1".utf8),
            info: Data("\(root.zone.owner)|\(root.zone.name)|\(root.name)".utf8), outputByteCount: 32)
    }

    static func linkContext(_ root: CloudRecordID, version: Int) -> String {
        "strata.link-key.1|\(root.zone.owner)|\(root.zone.name)|\(root.name)|\(version)"
    }

    /// Adds the zone's next key version and retires the current one at `now`: what is sealed
    /// from now on is unreadable to anyone the new version is not sealed for.
    func rotate(_ zone: CloudZoneID, at now: HybridTimestamp) async throws {
        _ = try await currentKey(for: zone)
        try await work.run {
            let user = try await self.signedInUser()
            guard var current = try await self.loadedVault().keys(of: zone).current else { return }
            current.retiredAt = now
            let next = ZoneKey.random(version: current.version + 1)
            try await self.overwriteZoneKey(current, of: zone, user: user)
            _ = try await self.saveZoneKeys([next], of: zone, user: user)
            self.logger.notice("rotated the key of zone \(zone) to version \(next.version)")
        }
    }

    private func overwriteZoneKey(_ key: ZoneKey, of zone: CloudZoneID, user: String) async throws {
        let identity = try await resolveIdentityIfNeeded(user: user)
        let id = keyRecordID("zone.\(zone.name).\(key.version)", user: user)
        var record = try await fetchKeyRecord(id.name, user: user) ?? CloudRecord(id: id, type: Self.recordType)
        record.fields["key"] = .bytes(
            try KeyWrapping.seal(
                key.sealedPayload, to: identity.publicKey, from: identity,
                context: Self.zoneKeyContext(zone, version: key.version, recipient: user)))
        // Written by versions before the retirement time was sealed with the key.
        record.fields["retiredAt"] = nil
        try await saveKeyRecords([record], user: user)
        try await updateVault { $0.insert(key, of: zone) }
    }

    // MARK: Enrollment, recovery, reset

    /// Devices waiting to be enrolled, with the fingerprints to compare with each device's.
    func pendingEnrollments() async throws -> [DeviceEnrollment] {
        let user = try await signedInUser()
        let records = try await allKeyRecords(user: user)
        let granted = Set(records.map(\.id.name).filter { $0.hasPrefix("grant.") }.map { String($0.dropFirst(6)) })
        return records.compactMap { record -> DeviceEnrollment? in
            guard record.id.name.hasPrefix("enroll."), case .bytes(let raw) = record.fields["publicKey"],
                let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: raw)
            else { return nil }
            let fingerprint = String(record.id.name.dropFirst(7))
            guard key.fingerprint == fingerprint, !granted.contains(fingerprint) else { return nil }
            return DeviceEnrollment(user: user, fingerprint: fingerprint, publicKey: raw)
        }
    }

    /// Seals the user's private key to an enrolling device.
    func approve(_ enrollment: DeviceEnrollment) async throws {
        let user = try await signedInUser()
        let identity = try await identity(of: user)
        let publicKey = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: enrollment.publicKey)
        guard publicKey.fingerprint == enrollment.fingerprint else {
            throw EncryptionError.enrollmentRequired(user: user, deviceFingerprint: enrollment.fingerprint)
        }
        let grant = CloudRecord(
            id: keyRecordID("grant.\(enrollment.fingerprint)", user: user), type: Self.recordType,
            fields: [
                "key": .bytes(
                    try KeyWrapping.seal(
                        identity.rawRepresentation, to: publicKey, from: identity, context: Self.grantContext(user, enrollment.fingerprint))
                )
            ])
        try await work.run { _ = try await self.saveKeyRecords([grant], user: user) }
    }

    /// Escrows the user's private key under `passphrase` in the key zone (replacing any).
    func setRecoveryPassphrase(_ passphrase: String) async throws {
        let user = try await signedInUser()
        let identity = try await identity(of: user)
        try await work.run {
            guard var record = try await self.fetchKeyRecord(Self.identityName, user: user) else { return }
            record.fields["recovery"] = .bytes(
                try KeyWrapping.seal(identity.rawRepresentation, passphrase: passphrase, context: Self.recoveryContext(user)))
            try await self.saveKeyRecords([record], user: user)
        }
    }

    /// Enrolls this device with the recovery passphrase.
    func enroll(recoveryPassphrase passphrase: String) async throws {
        let user = try await signedInUser()
        try await work.run {
            guard let record = try await self.fetchKeyRecord(Self.identityName, user: user),
                case .bytes(let published) = record.fields["publicKey"]
            else { throw EncryptionError.noRecoveryPassphrase(user: user) }
            guard case .bytes(let envelope) = record.fields["recovery"] else { throw EncryptionError.noRecoveryPassphrase(user: user) }
            guard let raw = KeyWrapping.open(envelope, passphrase: passphrase, context: Self.recoveryContext(user)),
                let identity = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw),
                identity.publicKey.rawRepresentation == published
            else { throw EncryptionError.wrongRecoveryPassphrase(user: user) }
            try await self.keep(identity, user: user)
        }
    }

    /// Replaces the user's identity with a new one, and gives each of `zones` a new key
    /// version above any the cloud has: what the lost keys sealed stays unreadable.
    func reset(zones: [CloudZoneID]) async throws {
        let user = try await signedInUser()
        try await work.run {
            let records = try await self.allKeyRecords(user: user)
            let stored = records.first { $0.id.name == Self.identityName }
            let identity = Curve25519.KeyAgreement.PrivateKey()
            try await self.updateVault { vault in
                vault.zoneKeys = vault.zoneKeys.filter { KeyVault.zone(ofKey: $0.key)?.owner != user }
            }
            try await self.publish(identity, user: user, replacing: stored)
            self.checkedZones.withLock { $0.removeAll() }
            let versions = records.compactMap { Self.zoneKeyName($0.id.name, user: user) }
            for zone in zones {
                let highest = versions.filter { $0.0 == zone }.map(\.1).max() ?? 0
                _ = try await self.saveZoneKeys([ZoneKey.random(version: highest + 1)], of: zone, user: user)
                self.checkedZones.withLock { _ = $0.insert(zone) }
            }
            // Grants sealed the old identity: useless now, and misleading to a device that reads them.
            let stale = records.filter { $0.id.name.hasPrefix("grant.") || $0.id.name.hasPrefix("enroll.") }.map(\.id)
            if !stale.isEmpty { _ = try await self.container.privateDatabase.modifyRecords(saving: [], deleting: stale) }
        }
    }

    // MARK: The key zone

    func keyZone(of user: String) -> CloudZoneID { CloudZoneID(name: Self.zoneName, owner: user) }

    private func keyRecordID(_ name: String, user: String) -> CloudRecordID {
        CloudRecordID(name: name, zone: keyZone(of: user))
    }

    private func fetchKeyRecord(_ name: String, user: String) async throws -> CloudRecord? {
        let id = keyRecordID(name, user: user)
        let results: [CloudRecordID: Result<CloudRecord, CloudError>]
        do {
            results = try await container.privateDatabase.fetchRecords([id])
        } catch CloudError.zoneNotFound {
            return nil
        }
        switch results[id] {
        case .success(let record): return record
        case .failure(.unknownItem), .failure(.zoneNotFound), nil: return nil
        case .failure(let error): throw error
        }
    }

    private func allKeyRecords(user: String) async throws -> [CloudRecord] {
        var records = ExactKeyed<CloudRecord>()
        var token: CloudChangeToken?
        while true {
            let page: CloudZoneChanges
            do {
                page = try await container.privateDatabase.fetchZoneChanges(keyZone(of: user), since: token, limit: 400)
            } catch CloudError.zoneNotFound {
                return []
            }
            for record in page.changed { records[record.id.name] = record }
            for tombstone in page.deleted { records[tombstone.id.name] = nil }
            guard page.moreComing else { break }
            guard page.token != token else {
                throw SyncEngineError.fetchStalled(
                    zone: keyZone(of: user), reason: "the cloud said more keys come but gave the same token \(page.token)")
            }
            token = page.token
        }
        return Array(records.values)
    }

    /// Saves records to the key zone, creating it when needed; false when a new record
    /// already exists there.
    @discardableResult
    private func saveKeyRecords(_ records: [CloudRecord], user: String, zoneCreated: Bool = false) async throws -> Bool {
        let database = container.privateDatabase
        var result: CloudModifyResult
        do {
            result = try await database.modifyRecords(saving: records, deleting: [])
        } catch CloudError.zoneNotFound {
            try await database.saveZones([keyZone(of: user)])
            result = try await database.modifyRecords(saving: records, deleting: [])
        }
        for record in records {
            switch result.saveResults[record.id] {
            case .success: continue
            case .failure(.zoneNotFound(let zone)):
                // Once: a zone that stays missing right after it was created is the cloud's fault.
                guard !zoneCreated else { throw CloudError.zoneNotFound(zone) }
                try await database.saveZones([keyZone(of: user)])
                return try await saveKeyRecords(records, user: user, zoneCreated: true)
            case .failure(.serverRecordChanged), .failure(.batchRequestFailed): return false
            case .failure(let error): throw error
            case nil: throw CloudError.networkFailure
            }
        }
        return true
    }

    // MARK: The vault

    private func storage() async throws -> KeyStorage {
        if let storage = resolvedStorage.withLock({ $0 }) { return storage }
        let storage = storageOfUser(try await signedInUser())
        resolvedStorage.withLock { $0 = storage }
        return storage
    }

    private func loadedVault() async throws -> KeyVault {
        if let vault = vault.withLock({ $0 }) { return vault }
        let storage = try await storage()
        let loaded = try await storage.load().map { try KeyVault.decode($0, from: storage) } ?? KeyVault()
        return vault.withLock { current in
            if let current { return current }
            current = loaded
            return loaded
        }
    }

    /// Changes the vault and saves it. Reloads first: another engine of the process (or a
    /// synced keychain) may have added keys since.
    private func updateVault(_ change: @Sendable (inout KeyVault) -> Void) async throws {
        let storage = try await storage()
        var latest = try await storage.load().map { try KeyVault.decode($0, from: storage) } ?? KeyVault()
        if let held = vault.withLock({ $0 }) { latest.merge(held) }
        change(&latest)
        try await storage.save(try latest.encoded())
        let updated = latest
        vault.withLock { $0 = updated }
    }
}

/// A device asking to be enrolled with the user's keys.
public struct DeviceEnrollment: Sendable, Hashable {
    /// The user.
    public let user: String
    /// The device's fingerprint: compare it with what the device shows before approving.
    public let fingerprint: String
    let publicKey: Data
}

extension KeyVault {
    /// Adds what `other` holds and this one lacks (this one wins where both hold a value).
    mutating func merge(_ other: KeyVault) {
        identities.merge(other.identities) { mine, _ in mine }
        for (zone, versions) in other.zoneKeys { zoneKeys[zone, default: [:]].merge(versions) { mine, _ in mine } }
        if enrollmentKey == nil { enrollmentKey = other.enrollmentKey }
    }
}
