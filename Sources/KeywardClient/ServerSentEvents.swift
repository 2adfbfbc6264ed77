import Foundation

/// One server-sent event (WHATWG HTML, "Server-sent events", §9.2.6 "Interpreting an event stream").
public struct ServerSentEvent: Sendable, Hashable {
    /// The `event:` field; "message" when the event named none.
    public var event: String
    /// The `data:` lines joined by `\n`.
    public var data: String
    /// The last `id:` field seen so far in the stream, if any.
    public var id: String?
    /// The `retry:` field, milliseconds, if this event carried one.
    public var retryMillis: Int?
}

/// Turns a byte stream into events as each blank line completes one; lines may end in LF, CRLF or CR.
struct ServerSentEventParser: Sendable {
    private var buffer: [UInt8] = []
    private var data: [String] = []
    private var event = ""
    private var lastID: String?
    private var retry: Int?
    private var sawData = false
    private var pendingCR = false
    private var isFirstLine = true

    /// Feeds `chunk`; returns the events it completed, in order.
    mutating func feed(_ chunk: Data) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in chunk {
            if pendingCR {
                pendingCR = false
                if byte == 0x0A { continue }  // the LF of a CRLF
            }
            if byte == 0x0A || byte == 0x0D {
                pendingCR = byte == 0x0D
                if let event = line(buffer) { events.append(event) }
                buffer.removeAll(keepingCapacity: true)
            } else {
                buffer.append(byte)
            }
        }
        return events
    }

    /// One complete line: a field, a comment, or the blank line that dispatches the event.
    private mutating func line(_ bytes: [UInt8]) -> ServerSentEvent? {
        var text = String(decoding: bytes, as: UTF8.self)
        if isFirstLine {
            isFirstLine = false
            if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        }
        if text.isEmpty { return dispatch() }
        if text.hasPrefix(":") { return nil }
        let name: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            name = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            name = Substring(text)
            value = ""
        }
        switch name {
        case "data":
            data.append(String(value))
            sawData = true
        case "event": event = String(value)
        case "id" where !value.contains("\u{0}"): lastID = String(value)
        case "retry": if let millis = Int(value), value.allSatisfy(\.isASCII) { retry = millis }
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            data.removeAll()
            event = ""
            retry = nil
            sawData = false
        }
        guard sawData else { return nil }
        return ServerSentEvent(event: event.isEmpty ? "message" : event, data: data.joined(separator: "\n"), id: lastID, retryMillis: retry)
    }
}
