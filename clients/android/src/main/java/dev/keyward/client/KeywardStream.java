package dev.keyward.client;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.function.Consumer;

/**
 * A streamed answer from a provider: the head now, the body as it arrives. Read it once, either as
 * bytes ({@link #body()}) or as server-sent events ({@link #nextEvent()}, {@link #events()},
 * {@link #forEachEvent}); each event is handed over as soon as its blank line arrives. Close it
 * when done: closing before the end cancels the transfer.
 */
public final class KeywardStream implements Closeable {
    private final HttpTransport.Response response;
    private final ServerSentEventParser parser = new ServerSentEventParser();
    private final ArrayDeque<ServerSentEvent> ready = new ArrayDeque<>();
    private final byte[] buffer = new byte[8192];
    private boolean ended;

    KeywardStream(HttpTransport.Response response) {
        this.response = response;
    }

    /** The provider's status. */
    public int status() {
        return response.status();
    }

    /** The first value of {@code name} (case-insensitive), or null. */
    public String header(String name) {
        return response.header(name);
    }

    /** Every header field. */
    public Map<String, List<String>> headers() {
        return response.headers();
    }

    /** The raw body as it arrives (instead of the events). */
    public InputStream body() {
        return response.body();
    }

    /**
     * The next event, blocking until its blank line arrives; null at the end of the body (an
     * unfinished last event is dropped, as the WHATWG rules say).
     *
     * @throws KeywardException {@code TRANSPORT} when the transfer fails
     */
    public ServerSentEvent nextEvent() throws KeywardException {
        while (ready.isEmpty()) {
            if (ended) return null;
            int count;
            try {
                count = response.body().read(buffer);
            } catch (IOException failure) {
                throw KeywardException.of(KeywardException.Kind.TRANSPORT, "the event stream broke: " + failure.getClass().getSimpleName(), failure);
            }
            if (count < 0) {
                ended = true;
                return null;
            }
            ready.addAll(parser.feed(buffer, 0, count));
        }
        return ready.poll();
    }

    /**
     * Hands every event to {@code listener} as it arrives, on the calling thread, until the body ends; then closes the stream.
     *
     * @throws KeywardException {@code TRANSPORT} when the transfer fails
     */
    public void forEachEvent(Consumer<ServerSentEvent> listener) throws KeywardException {
        try {
            for (ServerSentEvent event = nextEvent(); event != null; event = nextEvent()) listener.accept(event);
        } finally {
            close();
        }
    }

    /** The events as an iterator; a failed transfer throws {@link UncheckedIOException} (its cause the {@link KeywardException}'s). */
    public Iterator<ServerSentEvent> events() {
        return new Iterator<ServerSentEvent>() {
            private ServerSentEvent next;

            @Override
            public boolean hasNext() {
                if (next != null) return true;
                try {
                    next = nextEvent();
                } catch (KeywardException failure) {
                    IOException cause = failure.getCause() instanceof IOException ? (IOException) failure.getCause() : new IOException(failure.getMessage());
                    throw new UncheckedIOException(cause);
                }
                return next != null;
            }

            @Override
            public ServerSentEvent next() {
                if (!hasNext()) throw new NoSuchElementException();
                ServerSentEvent event = next;
                next = null;
                return event;
            }
        };
    }

    @Override
    public void close() {
        try {
            response.close();
        } catch (IOException ignored) {
            // nothing left to give the caller
        }
    }
}
