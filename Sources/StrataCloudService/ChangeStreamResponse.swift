import Hummingbird
import Logging
import StrataCloudWire

/// The body of `GET /v1/changes`: a `change` event per hint of the user's container, a
/// heartbeat comment when idle, until the client leaves, the container's hints end, or the
/// service closes the stream.
enum ChangeStreamResponse {
    static func make(
        hints: AsyncStream<Void>, ended: AsyncStream<Void>, heartbeat: Duration,
        onFinish: @escaping @Sendable () -> Void, logger: Logger
    ) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = CloudWire.eventStreamContentType
        headers[.cacheControl] = "no-cache"
        let body = ResponseBody { writer in
            defer { onFinish() }
            let (events, output) = AsyncStream<ChangeStreamEvent>.makeStream(bufferingPolicy: .bufferingNewest(8))
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await _ in hints { output.yield(.change) }
                    output.finish()
                }
                group.addTask {
                    for await _ in ended {}
                    output.finish()
                }
                group.addTask {
                    while !Task.isCancelled {
                        do { try await Task.sleep(for: heartbeat) } catch { break }
                        output.yield(.heartbeat)
                    }
                }
                do {
                    // An empty comment first, so the client's HTTP stack delivers the head now
                    // rather than with the first event.
                    try await writer.write(ByteBuffer(string: ChangeStreamEvent.heartbeat.text))
                    for await event in events {
                        try await writer.write(ByteBuffer(string: event.text))
                    }
                } catch {
                    logger.debug("change stream client left", metadata: ["error": "\(error)"])
                }
                group.cancelAll()
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }
}
