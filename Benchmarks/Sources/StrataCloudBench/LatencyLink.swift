import BenchSupport
import Foundation
import NIOCore
import NIOPosix

/// A TCP relay on loopback that holds every chunk for half a round trip in each direction: a
/// link as long as a real network's, without `tc netem` (which this machine's kernel lacks).
///
/// It delays; it does not limit bandwidth or drop packets. Each direction keeps its bytes in
/// order: a chunk leaves when its time comes, never before one that arrived earlier. A side
/// that closes closes the other once the bytes before its close have gone.
final class LatencyLink: Sendable {
    let baseURL: URL
    private let server: any Channel

    private init(baseURL: URL, server: any Channel) {
        self.baseURL = baseURL
        self.server = server
    }

    /// Listens on a free loopback port and relays each connection to `target` (an
    /// `http://host:port` URL), `roundTrip` longer than loopback.
    static func start(to target: URL, roundTrip: Duration) async throws -> LatencyLink {
        guard let host = target.host, let port = target.port else { throw BenchFailure("latency link: no host and port in \(target)") }
        let (seconds, attoseconds) = roundTrip.components
        let oneWay = TimeAmount.nanoseconds((seconds * 1_000_000_000 + attoseconds / 1_000_000_000) / 2)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { inbound in
                let towardsService = DelayedRelay(delay: oneWay)
                let towardsDevice = DelayedRelay(delay: oneWay)
                return inbound.pipeline.addHandler(towardsService).flatMap {
                    // On the device's connection's event loop: both relays run on one thread.
                    ClientBootstrap(group: inbound.eventLoop)
                        .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
                        .channelInitializer { outbound in outbound.pipeline.addHandler(towardsDevice) }
                        .connect(host: host, port: port)
                }
                .map { outbound in
                    towardsService.connect(to: outbound)
                    towardsDevice.connect(to: inbound)
                }
            }
        let server = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        guard let listening = server.localAddress?.port, let url = URL(string: "http://127.0.0.1:\(listening)") else {
            throw BenchFailure("latency link: no local port")
        }
        return LatencyLink(baseURL: url, server: server)
    }

    /// Stops listening; connections still open end with their devices.
    func stop() async throws {
        try await server.close().get()
    }
}

/// One direction of a relayed connection: reads its channel, writes to the peer each chunk
/// `delay` after it arrived. Everything runs on the two channels' shared event loop.
private final class DelayedRelay: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer

    private let delay: TimeAmount
    private var peer: (any Channel)?
    private var eventLoop: (any EventLoop)?
    /// Chunks waiting for their time, oldest first; nil stands for the channel's close.
    private var waiting = CircularBuffer<(due: NIODeadline, chunk: ByteBuffer?)>()
    private var timer: Scheduled<Void>?

    init(delay: TimeAmount) {
        self.delay = delay
    }

    /// The channel this direction writes to; what arrived before it connected goes when due.
    func connect(to peer: any Channel) {
        self.peer = peer
        release()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        eventLoop = context.eventLoop
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        enqueue(unwrapInboundIn(data))
    }

    func channelInactive(context: ChannelHandlerContext) {
        enqueue(nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func enqueue(_ chunk: ByteBuffer?) {
        waiting.append((.now() + delay, chunk))
        if timer == nil { scheduleNext() }
    }

    private func scheduleNext() {
        guard let due = waiting.first?.due, let eventLoop else { return }
        timer = eventLoop.scheduleTask(deadline: due) {
            self.timer = nil
            self.release()
        }
    }

    /// Writes every chunk whose time has come, in order, then waits for the next one.
    private func release() {
        guard let peer else { return }
        let now = NIODeadline.now()
        var wrote = false
        while let first = waiting.first, first.due <= now {
            waiting.removeFirst()
            guard let chunk = first.chunk else {
                if wrote { peer.flush() }
                peer.close(promise: nil)
                waiting.removeAll()
                return
            }
            peer.write(NIOAny(chunk), promise: nil)
            wrote = true
        }
        if wrote { peer.flush() }
        if timer == nil { scheduleNext() }
    }
}
