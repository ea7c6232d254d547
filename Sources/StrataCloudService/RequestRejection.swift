import Foundation
import Hummingbird
import NIOCore
import StrataCloudProtocol
import StrataSync

/// A request refused before it reached the backend.
enum RequestRejection: Error {
    /// The body is not the operation's request.
    case malformed(String)
    /// The body is larger than the service accepts.
    case bodyTooLarge

    var response: Response {
        switch self {
        case .malformed(let message): CloudResponses.badRequest(message)
        case .bodyTooLarge: CloudResponses.error(.limitExceeded)
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
            return try CloudWire.makeDecoder().decode(T.self, from: Data(buffer.readableBytesView))
        } catch {
            throw RequestRejection.malformed("the body is not a \(T.self): \(error)")
        }
    }

    /// Refuses a request over the configured limits with `CloudError.limitExceeded`, so the
    /// client splits it: too many items, too many saved bytes, or one record too large.
    func checkLimits(items: Int, saving records: [CloudRecord] = []) throws(CloudError) {
        guard items <= configuration.limits.maximumItemsPerRequest else { throw .limitExceeded }
        var total = 0
        for record in records {
            let size = record.encodedSize
            guard size <= configuration.maximumRecordBytes else { throw .limitExceeded }
            total += size
        }
        guard total <= configuration.limits.maximumBytesPerRequest else { throw .limitExceeded }
    }
}
