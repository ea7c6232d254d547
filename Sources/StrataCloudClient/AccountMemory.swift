import StrataCloud
import Synchronization

/// The account the service last reported for one bearer token.
///
/// The service takes the account from the token it verified, so while it accepts a token, it
/// answers the same for it. An engine asks for the account before every send and fetch: on
/// the push path that was a request on each side, before the one that moves the change (issue
/// #27). The container asks once per token instead. A new token (a refresh, another user)
/// asks again, and a request the service refuses with the remembered token (401: expired,
/// revoked, the account gone) forgets it, so the next ask reaches the service and an engine
/// learns of a sign-out after one refused request.
final class AccountMemory: Sendable {
    private let remembered = Mutex<(token: String, account: CloudAccount)?>(nil)

    /// The account remembered for `token`, if any.
    func account(for token: String) -> CloudAccount? {
        remembered.withLock { $0?.token == token ? $0?.account : nil }
    }

    /// Remembers an available account; any other status is asked again next time.
    func remember(_ account: CloudAccount, for token: String) {
        guard account.status == .available else { return }
        remembered.withLock { $0 = (token, account) }
    }

    /// Forgets what was remembered for `token`, which the service refused.
    func forget(token: String) {
        remembered.withLock { if $0?.token == token { $0 = nil } }
    }
}
