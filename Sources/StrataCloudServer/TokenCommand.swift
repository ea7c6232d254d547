import ArgumentParser
import Foundation
import StrataCloudService

/// `strata-cloud token`: a bearer token for a user, signed with the service's secret. For
/// development and tests; production issues tokens from its own sign-in.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "token", abstract: "Issue a development token for a user.")

    @Option(help: "The user the token signs in.")
    var user: String

    @Option(name: .customLong("jwt-key"), help: "The HS256 secret (default: $STRATA_JWT_KEY).")
    var jwtKey: String?

    @Option(help: "Seconds until the token expires.")
    var expiresIn = 86_400

    func run() async throws {
        guard let key = jwtKey ?? ProcessInfo.processInfo.environment["STRATA_JWT_KEY"], !key.isEmpty else {
            throw ValidationError("Give the token secret with --jwt-key or STRATA_JWT_KEY.")
        }
        guard key.utf8.count >= CloudServiceTokens.minimumKeyBytes else {
            throw ValidationError("The token secret must be at least \(CloudServiceTokens.minimumKeyBytes) bytes.")
        }
        guard !user.isEmpty else { throw ValidationError("The user must not be empty.") }
        print(try await CloudServiceTokens.issue(user: user, key: key, expiresIn: .seconds(expiresIn)))
    }
}
