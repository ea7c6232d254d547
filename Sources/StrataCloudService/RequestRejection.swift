import Foundation
import Hummingbird
import NIOCore
import StrataCloud
import StrataCloudWire

/// A request refused before it reached the backend.
enum RequestRejection: Error {
    /// The body is larger than the service accepts.
    case bodyTooLarge

    var response: Response {
        switch self {
        case .bodyTooLarge: CloudResponses.error(.limitExceeded)
        }
    }
}

extension InvalidRequest {
    /// The field a JSON decoding failure points at, and why.
    init<T>(decoding error: DecodingError, as type: T.Type) {
        func path(_ context: DecodingError.Context, _ key: (any CodingKey)? = nil) -> String {
            let keys = context.codingPath + (key.map { [$0] } ?? [])
            var text = ""
            for key in keys {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "body" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            self.init(field: path(context, key), reason: "missing")
        case .typeMismatch(let expected, let context), .valueNotFound(let expected, let context):
            self.init(field: path(context), reason: "expected \(expected)")
        case .dataCorrupted(let context):
            self.init(field: path(context), reason: context.debugDescription)
        @unknown default:
            self.init(field: "body", reason: "not a \(T.self)")
        }
    }
}

extension CloudService {
    /// The request's body decoded as `type`, refusing bodies over the configured size before
    /// reading them whole.
    func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws -> T {
        let limit = configuration.maximumBodyBytes
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw RequestRejection.bodyTooLarge
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw RequestRejection.bodyTooLarge
        }
        do {
            return try CloudWire.decode(T.self, from: Data(buffer.readableBytesView))
        } catch let error as DecodingError {
            throw InvalidRequest(decoding: error, as: T.self)
        } catch {
            throw InvalidRequest(field: "body", reason: "not a \(T.self): \(error)")
        }
    }

    /// Refuses a request over the configured limits with `CloudError.limitExceeded`, so the
    /// client splits it: the contract's one check (``StrataCloud/CloudLimits``), with the
    /// service's bound on one record.
    func checkLimits(items: Int, saving records: [CloudRecord] = []) throws(CloudError) {
        try configuration.limits.checkModify(
            saving: records, deletingCount: items - records.count, maximumRecordBytes: configuration.maximumRecordBytes)
    }
}
