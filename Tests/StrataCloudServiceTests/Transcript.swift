import Foundation
import StrataCloudWire
import StrataSync

/// What a script of cloud calls saw, one line per call, in a form two runs can be compared in:
/// values as sorted-key JSON, errors as their wire body.
final class Transcript {
    private(set) var lines: [String] = []

    /// Runs `call` and writes down its outcome.
    @discardableResult
    func step<T: Encodable>(_ label: String, _ call: () async throws -> T) async -> T? {
        do {
            let value = try await call()
            lines.append("\(label): ok \(Self.json(value))")
            return value
        } catch let error as CloudError {
            lines.append("\(label): \(Self.json(CloudErrorBody(error)))")
            return nil
        } catch {
            lines.append("\(label): unexpected \(error)")
            return nil
        }
    }

    /// Runs a call that answers nothing.
    func step(_ label: String, _ call: () async throws -> Void) async {
        await step(label) { () async throws -> EmptyResponse in
            try await call()
            return EmptyResponse()
        }
    }

    /// Whether some line reports the error `code`.
    func contains(code: String) -> Bool {
        lines.contains { $0.contains("\"code\":\"\(code)\"") }
    }

    static func json(_ value: some Encodable) -> String {
        (try? String(decoding: CloudWire.makeEncoder().encode(value), as: UTF8.self)) ?? "unencodable"
    }
}
