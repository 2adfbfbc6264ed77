/// The application's logger: JSON lines to a sink, stamped by the application's clock.
public struct Logger: Sendable {
    /// Where rendered lines go.
    public let sink: any LogSink
    /// The clock that stamps each line (`ts`, milliseconds since the Unix epoch).
    public let time: any TimeSource

    /// A logger writing to `sink`, stamped by `time` (tests pin it).
    public init(sink: any LogSink, time: any TimeSource) {
        self.sink = sink
        self.time = time
    }

    /// Starts a line for `event` at the current time.
    public func line(_ event: String) -> LogLine { LogLine(event: event, timeMillis: time.nowMillis()) }

    /// Writes a finished line.
    public func emit(_ line: consuming LogLine) { sink.write(utf8Line: line.renderedUTF8()) }

    /// Writes a one-off line with a `message` field (start-up, reloads, shutdown).
    public func info(_ event: String, _ message: String) {
        var entry = line(event)
        entry.add("message", message)
        emit(entry)
    }
}
