import Foundation
import ScorekeeperCore
import Strata

/// One bounded sync with the live cloud, for the command line: local first, so a cloud that is
/// down, unreachable or slow delays a command by at most the deadline and never loses it.
enum CloudSync {
    /// Syncs `engine` within `deadline`; returns nil when it synced, else a message for the
    /// user saying the cloud was not reached and the change will go out next time.
    ///
    /// A long sync (a first one of a large file, say) draws a progress bar through `progress`:
    /// standard error, so what the command prints on standard output stays as it was.
    static func run(
        _ engine: SyncEngine, within deadline: Duration, cloud: String, database: String,
        progress: SyncProgressPrinter = SyncProgressPrinter(write: { FileHandle.standardError.write(Data($0.utf8)) })
    ) async -> String? {
        let outcome = await progress.drawing(engine) { await race(engine, within: deadline) }
        guard let outcome else { return nil }
        return "Could not sync with the cloud at \(cloud): \(outcome). "
            + "Your change is saved in \(database) and will be sent the next time a command syncs."
    }

    /// Syncs `engine`, or gives up after `deadline`; returns nil when it synced, else why not.
    private static func race(_ engine: SyncEngine, within deadline: Duration) async -> String? {
        await withTaskGroup(of: String?.self) { group -> String? in
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
    }
}
