/// What the change stream (`GET /v1/changes`, server-sent events) carries.
///
/// Events are hints only: a client re-fetches with its change tokens, which alone decide what
/// changed. Heartbeats are SSE comments, so a connection that went quiet can be told from one
/// that died.
public enum ChangeStreamEvent: Sendable, Hashable {
    /// Something changed for the user: fetch.
    case change
    /// Keeps the connection alive; carries nothing.
    case heartbeat

    /// The SSE event name of ``change``.
    public static let changeEventName = "change"

    /// The event as server-sent-events text, with its terminating blank line.
    public var text: String {
        switch self {
        case .change: "event: \(Self.changeEventName)\ndata: {}\n\n"
        case .heartbeat: ": heartbeat\n\n"
        }
    }
}

/// Splits a server-sent-events byte stream into events, whatever the chunking of the bytes.
///
/// Only what the change stream needs: event names and dispatch on a blank line; comments (and so
/// heartbeats) are reported as heartbeats, data is ignored.
public struct ServerSentEventParser: Sendable {
    private var line: [UInt8] = []
    private var eventName: String?
    private var hasFields = false
    private var lastWasCarriageReturn = false

    /// A parser at the start of a stream.
    public init() {}

    /// Feeds bytes; returns the events they complete, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [ChangeStreamEvent] {
        var events: [ChangeStreamEvent] = []
        for byte in bytes {
            // A line ends at CR, LF or CRLF; the LF of a CRLF must not end a second line.
            if byte == UInt8(ascii: "\n"), lastWasCarriageReturn {
                lastWasCarriageReturn = false
                continue
            }
            lastWasCarriageReturn = byte == UInt8(ascii: "\r")
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                if let event = endLine() { events.append(event) }
            } else {
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ChangeStreamEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            defer {
                eventName = nil
                hasFields = false
            }
            guard hasFields else { return nil }
            return (eventName ?? "message") == ChangeStreamEvent.changeEventName ? .change : nil
        }
        if line.first == UInt8(ascii: ":") { return .heartbeat }
        let text = String(decoding: line, as: UTF8.self)
        let (field, value) = Self.split(text)
        hasFields = true
        if field == "event" { eventName = value }
        return nil
    }

    private static func split(_ line: String) -> (String, String) {
        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
        var value = line[line.index(after: colon)...]
        if value.first == " " { value = value.dropFirst() }
        return (String(line[..<colon]), String(value))
    }
}
