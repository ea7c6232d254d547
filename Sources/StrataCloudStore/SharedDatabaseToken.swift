import Foundation
import StrataCloud

/// The shared database's change token: the position of every shared zone the user could see
/// when it was issued. Zones of many owners have no common feed, and a participant reaches few
/// zones, so the token carries them all and the next fetch compares.
struct SharedDatabaseToken {
    var positions: [CloudZoneID: Int64]

    private struct Entry: Codable {
        var owner: String
        var zone: String
        var position: Int64
    }

    init(positions: [CloudZoneID: Int64]) {
        self.positions = positions
    }

    /// The positions a token lists; a token this store did not issue has expired.
    init(_ token: CloudChangeToken?) throws {
        guard let token else {
            positions = [:]
            return
        }
        guard token.value.hasPrefix("s:"), let data = Data(base64Encoded: String(token.value.dropFirst(2))),
            let entries = try? JSONDecoder().decode([Entry].self, from: data)
        else { throw CloudError.changeTokenExpired }
        positions = Dictionary(entries.map { (CloudZoneID(name: $0.zone, owner: $0.owner), $0.position) }, uniquingKeysWith: max)
    }

    var token: CloudChangeToken {
        get throws {
            let entries = positions.map { Entry(owner: $0.key.owner, zone: $0.key.name, position: $0.value) }
                .sorted { ($0.owner, $0.zone) < ($1.owner, $1.zone) }
            return CloudChangeToken("s:" + (try JSONEncoder().encode(entries)).base64EncodedString())
        }
    }
}
