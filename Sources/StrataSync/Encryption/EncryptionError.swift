import StrataCloud

/// Why end-to-end encryption could not seal or open something: every case names the record,
/// zone, asset or user it concerns.
public enum EncryptionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A record's sealed fields failed authentication: the stored bytes were changed, or moved
    /// from another record, field set or zone. The record is quarantined, never applied.
    case tamperedRecord(CloudRecordID)
    /// A record arrived without sealed fields from a cloud this engine encrypts for.
    case unsealedRecord(CloudRecordID)
    /// A record was sealed with a key version retired before its edits were made: written by
    /// someone who lost access when the key rotated (a removed participant).
    case retiredKey(CloudRecordID, version: Int)
    /// No key this device holds or can fetch opens the zone's records at this version.
    case missingZoneKey(CloudZoneID, version: Int)
    /// An asset's sealed content failed authentication.
    case tamperedAsset(String)
    /// This user has an encryption identity in the cloud that this device does not hold:
    /// approve the device on another one (``SyncEngine/approveEnrollment(_:)``), enroll it with
    /// the recovery passphrase, or — when every device and the passphrase are gone — call
    /// ``SyncEngine/resetEncryptedData()`` to re-upload this device's data under new keys.
    case enrollmentRequired(user: String, deviceFingerprint: String)
    /// The recovery passphrase does not open the user's key.
    case wrongRecoveryPassphrase(user: String)
    /// The user set no recovery passphrase.
    case noRecoveryPassphrase(user: String)
    /// A participant has not published a public key yet, so the share key cannot be sealed for
    /// them; they get it once their engine ran once and the share is saved again.
    case participantWithoutKey(user: String)
    /// The key file could not be read or written.
    case keyStorage(path: String, reason: String)

    public var description: String {
        switch self {
        case .tamperedRecord(let id): "record \(id) failed authentication: its sealed fields were changed or moved"
        case .unsealedRecord(let id): "record \(id) arrived unencrypted from a cloud this engine encrypts for"
        case .retiredKey(let id, let version):
            "record \(id) was sealed with key version \(version) after that key was retired (a removed participant's write)"
        case .missingZoneKey(let zone, let version): "no key opens zone \(zone) at version \(version)"
        case .tamperedAsset(let hash): "asset \(hash) failed authentication"
        case .enrollmentRequired(let user, let fingerprint):
            "this device (\(fingerprint)) does not hold the encryption keys of user \(user): approve it on another device, enroll it with the recovery passphrase, or reset the encrypted data"
        case .wrongRecoveryPassphrase(let user): "the recovery passphrase does not open the keys of user \(user)"
        case .noRecoveryPassphrase(let user): "user \(user) set no recovery passphrase"
        case .participantWithoutKey(let user): "participant \(user) has not published a public key yet"
        case .keyStorage(let path, let reason): "the key file \(path): \(reason)"
        }
    }
}
