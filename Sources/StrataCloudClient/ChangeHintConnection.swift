import AsyncHTTPClient
import NIOCore
import StrataCloud
import StrataCloudWire

/// Keeps one change stream open for ``CloudServiceContainer/changeHints()``, reconnecting with
/// backoff until cancelled.
struct ChangeHintConnection: Sendable {
    let transport: CloudServiceTransport
    let reconnection: CloudServiceContainer.Reconnection
    let hints: AsyncStream<Void>.Continuation

    func run() async {
        var delay = reconnection.initialDelay
        while !Task.isCancelled {
            if await listen() {
                delay = reconnection.initialDelay
            }
            guard !Task.isCancelled else { break }
            do {
                try await Task.sleep(for: delay)
            } catch {
                break
            }
            delay = min(delay * 2, reconnection.maximumDelay)
        }
        hints.finish()
    }

    /// Listens until the stream ends or fails; true when it connected.
    private func listen() async -> Bool {
        var connected = false
        do {
            let bearer = try await transport.bearer()
            var request = try await transport.request(.GET, CloudRoute.changes, bearer: bearer)
            request.headers.add(name: "Accept", value: CloudWire.eventStreamContentType)
            // The stream has no end: only cancellation or a drop ends it.
            let response = try await transport.httpClient.execute(request, deadline: .distantFuture)
            guard response.status.code == 200 else {
                // The account remembered for a refused token is asked for again.
                if response.status.code == 401 { transport.accounts.forget(token: bearer) }
                return false
            }
            connected = true
            // Whatever changed while the stream was down went unhinted.
            hints.yield()
            var parser = ServerSentEventParser()
            for try await buffer in response.body {
                for event in parser.feed(buffer.readableBytesView) where event == .change {
                    hints.yield()
                }
            }
        } catch {
            // A drop or a refused connection: the caller backs off and reconnects.
        }
        return connected
    }
}
