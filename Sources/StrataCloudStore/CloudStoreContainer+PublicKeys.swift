import Foundation
import StrataCloud

// Placeholder until the store keeps public keys (being built on a branch): nothing committed
// to main calls these yet.
extension CloudStoreContainer {
    public func publishPublicKey(_ key: Data) async throws { throw CloudError.serviceUnavailable(retryAfter: nil) }
    public func publicKeys(of users: [String]) async throws -> [String: Data] { throw CloudError.serviceUnavailable(retryAfter: nil) }
}
