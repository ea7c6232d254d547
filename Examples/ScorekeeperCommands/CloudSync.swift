import Foundation
import Strata

/// One bounded sync with the live cloud, for the command line: local first, so a cloud that is
/// down, unreachable or slow delays a command by at most the deadline and never loses it.
enum CloudSync {
    /// Syncs `engine` within `deadline`; returns nil when it synced, else a message for the
    /// user saying the cloud was not reached and the change will go out next time.
    static func run(_ engine: SyncEngine, within deadline: Duration, cloud: String, database: String) async -> String? {
        let outcome = await withTaskGroup(of: String?.self) { group -> String? in
            group.addTask {
                do {
                    try await engine.syncChanges()
                    return nil
                } catch is CancellationError {
                    return "it did not answer within \(deadline)"
                } catch {
                    return "\(error)"
                }
            }
            group.addTask {
                // Cancelled when the sync ends first.
                try? await Task.sleep(for: deadline)
                return Task.isCancelled ? nil : "it did not answer within \(deadline)"
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            // The sync that lost the race ends now (cancelled); its answer adds nothing.
            while await group.next() != nil {}
            return first
        }
        guard let outcome else { return nil }
        return "Could not sync with the cloud at \(cloud): \(outcome). "
            + "Your change is saved in \(database) and will be sent the next time a command syncs."
    }
}
