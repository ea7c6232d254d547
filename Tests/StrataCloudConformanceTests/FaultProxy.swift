import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP proxy on 127.0.0.1 between clients and a service, injecting faults at the byte level:
/// it cuts a connection in the middle of a request (half of it delivered) or of a response (half
/// of it delivered), and delays a response. Plain POSIX sockets on dedicated threads (an accept
/// thread, two pumps per connection): nothing here ever runs on Swift's cooperative pool.
///
/// Faults are armed by the test and fire on the next traffic that fits; the upstream port can be
/// repointed (a restarted service listens elsewhere). It counts requests (chunks from the client
/// that start an HTTP request) and measures each one's latency: from its first byte to the first
/// byte of its answer.
final class FaultProxy: Sendable {
    struct Stats: Sendable {
        var requests = 0
        /// Seconds from a request's first byte to its answer's first byte, for requests whose
        /// answer no injected delay held back.
        var latencies: [Double] = []
        /// Latencies of answers held back by an injected delay.
        var delayedLatencies: [Double] = []
        /// Faults that fired, by kind.
        var fired: [String: Int] = [:]
        /// Connections that found no service to connect to (it was down).
        var refused = 0
    }

    private struct State {
        var upstreamPort: UInt16
        var cutRequests = 0
        var cutResponses = 0
        var delays: [Duration] = []
        var stopped = false
        var links: [ObjectIdentifier: Link] = [:]
        var stats = Stats()
    }

    /// The port clients connect to.
    let port: UInt16
    private let listener: Int32
    private let state: Mutex<State>

    init(upstreamPort: UInt16) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ProxyError.socket(errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 128) == 0 else {
            close(fd)
            throw ProxyError.socket(errno)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        listener = fd
        state = Mutex(State(upstreamPort: upstreamPort))
        let acceptor = Thread { [self] in acceptLoop() }
        acceptor.name = "fault proxy accept"
        acceptor.start()
    }

    enum ProxyError: Error { case socket(Int32) }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    // MARK: The test's controls

    /// Sends new connections to `port` from now on.
    func repoint(to port: UInt16) { state.withLock { $0.upstreamPort = port } }

    /// The next request chunk is cut in half and its connection closed.
    func cutNextRequest() { state.withLock { $0.cutRequests += 1 } }

    /// The next response chunk is cut in half and its connection closed: the service did the
    /// work, the client never hears of it.
    func cutNextResponse() { state.withLock { $0.cutResponses += 1 } }

    /// The next response is held back for `delay`.
    func delayNextResponse(by delay: Duration) { state.withLock { $0.delays.append(delay) } }

    /// Forgets the faults armed that have not fired.
    func disarm() {
        state.withLock {
            $0.cutRequests = 0
            $0.cutResponses = 0
            $0.delays = []
        }
    }

    /// Cuts every open connection at once (as a network drop would).
    func cutAll() {
        for link in state.withLock({ Array($0.links.values) }) { link.cut() }
    }

    var stats: Stats { state.withLock { $0.stats } }

    func stop() {
        let links = state.withLock { state in
            state.stopped = true
            return Array(state.links.values)
        }
        // Wakes the accept thread, which closes the socket.
        shutdown(listener, Int32(SHUT_RDWR))
        for link in links { link.cut() }
    }

    // MARK: Pumping

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) }
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if state.withLock({ $0.stopped }) { break }
                // A transient failure (too many files and the like): do not spin.
                usleep(10_000)
                continue
            }
            if state.withLock({ $0.stopped }) {
                close(client)
                break
            }
            let upstreamPort = state.withLock { $0.upstreamPort }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = Self.loopback(port: upstreamPort)
            let connected =
                server >= 0
                && withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                } == 0
            guard connected else {
                if server >= 0 { close(server) }
                close(client)
                state.withLock { $0.stats.refused += 1 }
                continue
            }
            var yes: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            setsockopt(server, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            let link = Link(client: client, server: server)
            state.withLock { $0.links[ObjectIdentifier(link)] = link }
            let up = Thread { [self] in pumpRequests(link) }
            up.name = "fault proxy up"
            let down = Thread { [self] in pumpResponses(link) }
            down.name = "fault proxy down"
            up.start()
            down.start()
        }
        close(listener)
    }

    private static let methods = ["GET ", "POST ", "PUT ", "DELETE ", "PATCH ", "HEAD "].map { Array($0.utf8) }

    private func pumpRequests(_ link: Link) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(link.client, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            let chunk = buffer[0..<count]
            let starts = Self.methods.contains { chunk.starts(with: $0) }
            let cut = state.withLock { state -> Bool in
                if starts { state.stats.requests += 1 }
                guard state.cutRequests > 0 else { return false }
                state.cutRequests -= 1
                state.stats.fired["proxy: request cut", default: 0] += 1
                return true
            }
            if starts { link.requestStarted() }
            if cut {
                _ = Self.send(link.server, chunk.prefix(count / 2))
                break
            }
            if !Self.send(link.server, chunk) { break }
        }
        link.cut()
        finish(link)
    }

    private func pumpResponses(_ link: Link) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(link.server, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            let chunk = buffer[0..<count]
            let started = link.takeRequestStart()
            let (cut, delay) = state.withLock { state -> (Bool, Duration?) in
                if state.cutResponses > 0 {
                    state.cutResponses -= 1
                    state.stats.fired["proxy: response cut", default: 0] += 1
                    return (true, nil)
                }
                if started != nil, !state.delays.isEmpty {
                    state.stats.fired["proxy: response delayed", default: 0] += 1
                    return (false, state.delays.removeFirst())
                }
                return (false, nil)
            }
            if let delay {
                // A thread of the proxy's own: sleeping here blocks nothing else.
                let (seconds, attoseconds) = delay.components
                usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
            }
            if let started {
                let elapsed = (ContinuousClock.now - started).components
                let latency = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
                state.withLock {
                    if delay == nil { $0.stats.latencies.append(latency) } else { $0.stats.delayedLatencies.append(latency) }
                }
            }
            if cut {
                _ = Self.send(link.client, chunk.prefix(count / 2))
                break
            }
            if !Self.send(link.client, chunk) { break }
        }
        link.cut()
        finish(link)
    }

    /// Once both pumps of a link ended, its sockets close.
    private func finish(_ link: Link) {
        if link.pumpEnded() {
            state.withLock { _ = $0.links.removeValue(forKey: ObjectIdentifier(link)) }
            close(link.client)
            close(link.server)
        }
    }

    private static func send(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }

    /// One proxied connection: the client's socket and the service's.
    final class Link: Sendable {
        let client: Int32
        let server: Int32
        private let state = Mutex<(requestStart: ContinuousClock.Instant?, ended: Int, cut: Bool)>((nil, 0, false))

        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }

        func requestStarted() { state.withLock { $0.requestStart = ContinuousClock.now } }

        func takeRequestStart() -> ContinuousClock.Instant? {
            state.withLock { state in
                defer { state.requestStart = nil }
                return state.requestStart
            }
        }

        /// Shuts both sockets down (their pumps wake and end); they close once both pumps ended.
        func cut() {
            state.withLock { state in
                guard !state.cut, state.ended < 2 else { return }
                state.cut = true
                shutdown(client, Int32(SHUT_RDWR))
                shutdown(server, Int32(SHUT_RDWR))
            }
        }

        /// Whether this was the second pump to end.
        func pumpEnded() -> Bool {
            state.withLock { state in
                state.ended += 1
                return state.ended == 2
            }
        }
    }
}
