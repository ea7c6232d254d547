import Foundation
import StrataCloudService
import Synchronization

/// A device's sign-in: one access token for an hour, issued on first use and again once it
/// has less than ten minutes left.
final class BenchSession: Sendable {
    private let user: String
    private let current = Mutex<(token: String, expires: Date)?>(nil)

    init(user: String) { self.user = user }

    func token() async throws -> String {
        if let held = current.withLock({ $0 }), held.expires.timeIntervalSinceNow > 600 { return held.token }
        let now = Date()
        let token = try await CloudServiceTokens.issue(user: user, key: CloudSetup.key, expiresIn: .seconds(3600), now: now)
        current.withLock { $0 = (token, now.addingTimeInterval(3600)) }
        return token
    }
}
