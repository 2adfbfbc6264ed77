/// The application's logger: JSON lines to a sink, stamped by the application's clock.
public struct Logger: Sendable {
    /// Where rendered lines go.
    public let sink: any LogSink
    /// The clock that stamps each line (`ts`, milliseconds since the Unix epoch).
    public let time: any TimeSource
    /// Holds back repeats of the lines written through ``emitThrottled(_:key:fill:)`` (shared by
    /// every copy of this logger).
    public let throttle: LogThrottle

    /// A logger writing to `sink`, stamped by `time` (tests pin it).
    public init(sink: any LogSink, time: any TimeSource) {
        self.sink = sink
        self.time = time
        throttle = LogThrottle()
    }

    /// Starts a line for `event` at the current time.
    public func line(_ event: String) -> LogLine { LogLine(event: event, timeMillis: time.nowMillis()) }

    /// Writes a finished line.
    public func emit(_ line: consuming LogLine) { sink.write(utf8Line: line.renderedUTF8()) }

    /// Writes an `event` line filled by `fill`, unless a line of the same `key` was written less than
    /// a second ago by this clock (``LogThrottle``): the first is always written, and a later one
    /// carries `suppressed`, the count of the key's lines held back since the last one written.
    /// - Parameter key: what counts as "the same line" (fixed words, never request data).
    public func emitThrottled(_ event: String, key: String, fill: (inout LogLine) -> Void) {
        guard let heldBack = throttle.admit(key: key, nowMillis: time.nowMillis()) else { return }
        var entry = line(event)
        fill(&entry)
        if heldBack > 0 { entry.add("suppressed", heldBack) }
        emit(entry)
    }

    /// Writes a one-off line with a `message` field (start-up, reloads, shutdown).
    public func info(_ event: String, _ message: String) {
        var entry = line(event)
        entry.add("message", message)
        emit(entry)
    }
}
