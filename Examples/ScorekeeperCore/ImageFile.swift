import Foundation

/// Reads an avatar image file, refusing what is not one before anything is stored.
enum ImageFile {
    /// The leading bytes of the formats an avatar may have.
    static let signatures: [[UInt8]] = [
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],  // PNG
        [0xFF, 0xD8, 0xFF],  // JPEG
        Array("GIF87a".utf8), Array("GIF89a".utf8),
        Array("BM".utf8),  // BMP
    ]

    static func isImage(_ data: Data) -> Bool {
        let bytes = [UInt8](data.prefix(12))
        if bytes.count >= 12, bytes[0..<4] == [0x52, 0x49, 0x46, 0x46], bytes[8..<12] == [0x57, 0x45, 0x42, 0x50] {
            return true  // RIFF....WEBP
        }
        return signatures.contains { signature in bytes.starts(with: signature) }
    }

    /// The file's bytes.
    ///
    /// - Throws: ``ScorekeeperError/unreadableAvatar(path:reason:)`` for a missing, unreadable
    ///   or directory path; ``ScorekeeperError/notAnImage(path:)`` when the bytes are no image.
    static func read(_ path: String) throws -> Data {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ScorekeeperError.unreadableAvatar(path: path, reason: "no such file")
        }
        guard !isDirectory.boolValue else {
            throw ScorekeeperError.unreadableAvatar(path: path, reason: "it is a folder, not a file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ScorekeeperError.unreadableAvatar(path: path, reason: "permission denied or unreadable")
        }
        guard isImage(data) else { throw ScorekeeperError.notAnImage(path: path) }
        return data
    }
}
