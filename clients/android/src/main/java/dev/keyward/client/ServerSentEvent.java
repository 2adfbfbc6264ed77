package dev.keyward.client;

import java.util.Objects;

/** One server-sent event (WHATWG HTML, "Server-sent events", §9.2.6 "Interpreting an event stream"). */
public final class ServerSentEvent {
    private final String event;
    private final String data;
    private final String id;
    private final Integer retryMillis;

    /**
     * @param event the {@code event:} field; "message" when the event named none
     * @param data the {@code data:} lines joined by {@code \n}
     * @param id the last {@code id:} seen so far in the stream, or null
     * @param retryMillis the {@code retry:} field of this event, milliseconds, or null
     */
    public ServerSentEvent(String event, String data, String id, Integer retryMillis) {
        this.event = event;
        this.data = data;
        this.id = id;
        this.retryMillis = retryMillis;
    }

    /** The event type ("message" by default). */
    public String event() {
        return event;
    }

    /** The data. */
    public String data() {
        return data;
    }

    /** The last event id, or null. */
    public String id() {
        return id;
    }

    /** The reconnection time this event asked for, milliseconds, or null. */
    public Integer retryMillis() {
        return retryMillis;
    }

    @Override
    public boolean equals(Object other) {
        if (!(other instanceof ServerSentEvent)) return false;
        ServerSentEvent that = (ServerSentEvent) other;
        return event.equals(that.event) && data.equals(that.data) && Objects.equals(id, that.id) && Objects.equals(retryMillis, that.retryMillis);
    }

    @Override
    public int hashCode() {
        return Objects.hash(event, data, id, retryMillis);
    }

    @Override
    public String toString() {
        return "ServerSentEvent(event=" + event + ", data=" + data + ", id=" + id + ", retry=" + retryMillis + ")";
    }
}
