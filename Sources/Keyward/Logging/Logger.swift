/// The application's logger: JSON lines to a sink, stamped by the application's clock.
public struct Logger: Sendable {
    public let sink: any LogSink
    public let time: any TimeSource

    public init(sink: any LogSink, time: any TimeSource) {
        self.sink = sink
        self.time = time
    }

    /// Starts a line for `event` at the current time.
    public func line(_ event: String) -> LogLine { LogLine(event: event, timeMillis: time.nowMillis()) }

    /// Writes a finished line.
    public func emit(_ line: LogLine) { sink.write(line: line.rendered) }

    /// Writes a one-off line with a `message` field (start-up, reloads, shutdown).
    public func info(_ event: String, _ message: String) {
        var entry = line(event)
        entry.add("message", message)
        emit(entry)
    }
}
