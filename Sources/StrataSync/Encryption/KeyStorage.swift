import Dispatch
import Foundation
import Synchronization

/// Where a device keeps its encryption keys: its users' private keys, the zone keys it holds
/// and its enrollment key. The cloud never sees them unwrapped.
///
/// - ``file(atPath:)``: a JSON file readable and writable by its owner only (mode 0600), written
///   atomically; what a file database uses by default (beside it, `<database>.strata-keys`).
/// - ``custom(named:load:save:)``: a hook for a platform keychain.
/// - ``inMemory()``: keys that live as long as the value (a device that forgets on exit).
/// - ``processKeychain(named:)``: in memory, shared by every engine of the process that names
///   the same keychain, like a platform keychain that syncs among a user's devices: what
///   in-memory databases (previews and tests) use by default, per container identifier.
public struct KeyStorage: Sendable {
    enum Backing: Sendable {
        case file(String)
        case memory(MemoryBox)
        case custom(load: @Sendable () throws -> Data?, save: @Sendable (Data) throws -> Void)
    }

    let backing: Backing
    /// Names the storage in errors and logs.
    public let description: String

    /// Keys in a file at `path`, created with mode 0600.
    public static func file(atPath path: String) -> KeyStorage {
        KeyStorage(backing: .file(path), description: path)
    }

    /// Keys kept by `load` and `save` (a platform keychain item, say): `load` returns nil
    /// when nothing was saved yet.
    public static func custom(
        named name: String, load: @escaping @Sendable () throws -> Data?, save: @escaping @Sendable (Data) throws -> Void
    ) -> KeyStorage {
        KeyStorage(backing: .custom(load: load, save: save), description: name)
    }

    /// Keys in memory, for this value and its copies only.
    public static func inMemory() -> KeyStorage {
        KeyStorage(backing: .memory(MemoryBox()), description: "memory")
    }

    final class MemoryBox: Sendable {
        let data = Mutex<Data?>(nil)
    }

    /// Keys in memory, shared by every engine of this process that names `name`.
    public static func processKeychain(named name: String) -> KeyStorage {
        let box = keychains.withLock { keychains in
            if let box = keychains[name] { return box }
            let box = Keychain()
            keychains[name] = box
            return box
        }
        return KeyStorage(
            backing: .custom(load: { box.data.withLock { $0 } }, save: { data in box.data.withLock { $0 = data } }),
            description: "process keychain \(name)")
    }

    private final class Keychain: Sendable {
        let data = Mutex<Data?>(nil)
    }

    private static let keychains = Mutex<[String: Keychain]>([:])

    /// The stored bytes, or nil when nothing was stored yet. Files are read on a thread of
    /// their own, never on the cooperative pool.
    func load() async throws -> Data? {
        switch backing {
        case .memory(let box): return box.data.withLock { $0 }
        case .custom(let load, _): return try load()
        case .file(let path):
            return try await Self.onIOThread {
                guard FileManager.default.fileExists(atPath: path) else { return nil }
                do {
                    // A key file others can read is a leak waiting to happen: tighten it.
                    let attributes = try FileManager.default.attributesOfItem(atPath: path)
                    if let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0 {
                        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
                    }
                    return try Data(contentsOf: URL(fileURLWithPath: path))
                } catch {
                    throw EncryptionError.keyStorage(path: path, reason: "cannot read it: \(error)")
                }
            }
        }
    }

    /// Replaces the stored bytes; a file is written beside itself and renamed over, so a crash
    /// leaves the old keys or the new ones, never half of either.
    func save(_ data: Data) async throws {
        switch backing {
        case .memory(let box): box.data.withLock { $0 = data }
        case .custom(_, let save): try save(data)
        case .file(let path):
            try await Self.onIOThread {
                let temporary = path + ".tmp-\(UUID().uuidString.prefix(8))"
                try Self.writeOwnerOnly(data, to: temporary, reportingAs: path)
                guard rename(temporary, path) == 0 else {
                    let reason = String(cString: strerror(errno))
                    try? FileManager.default.removeItem(atPath: temporary)
                    throw EncryptionError.keyStorage(path: path, reason: "cannot replace it: \(reason)")
                }
            }
        }
    }

    /// Creates `temporary` with mode 0600 from its first byte (never readable by others, even
    /// for a moment, whatever the umask), writes `data` whole and flushes it to disk.
    private static func writeOwnerOnly(_ data: Data, to temporary: String, reportingAs path: String) throws {
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw EncryptionError.keyStorage(path: path, reason: "cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        var failure: String?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let written = write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = String(cString: strerror(errno))
                    return
                }
                offset += written
            }
        }
        if failure == nil && fsync(descriptor) != 0 { failure = String(cString: strerror(errno)) }
        close(descriptor)
        if let failure {
            unlink(temporary)
            throw EncryptionError.keyStorage(path: path, reason: "cannot write \(temporary): \(failure)")
        }
    }

    private static func onIOThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try body() })
            }
        }
    }
}

/// Whether and how a ``SyncEngine`` encrypts what it sends: on by default, end to end.
public struct SyncEncryption: Sendable {
    enum Mode: Sendable {
        case endToEnd(keys: KeyStorage?, recoveryPassphrase: String?)
        case disabled
    }

    let mode: Mode

    /// End-to-end encryption with keys kept where the database's kind suggests (a file beside
    /// a file database; the process keychain of the container for an in-memory one).
    public static let endToEnd = SyncEncryption(mode: .endToEnd(keys: nil, recoveryPassphrase: nil))

    /// End-to-end encryption with keys kept in `keys`; with `recoveryPassphrase`, a device
    /// without keys enrolls itself with it, and a device that creates the user's keys escrows
    /// them in the cloud under it (scrypt, so guessing costs real memory and time).
    public static func endToEnd(keys: KeyStorage? = nil, recoveryPassphrase: String? = nil) -> SyncEncryption {
        SyncEncryption(mode: .endToEnd(keys: keys, recoveryPassphrase: recoveryPassphrase))
    }

    /// No encryption: the cloud stores every field readable, for a server that must read the
    /// data (search, reports, server-side rules on values). The operator, anyone with a backup
    /// and anyone who gets into the database read every record.
    public static let disabled = SyncEncryption(mode: .disabled)

    /// Whether records are encrypted.
    public var isEnabled: Bool {
        if case .disabled = mode { return false }
        return true
    }
}
