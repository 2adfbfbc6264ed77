package dev.keyward.client;

import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The default {@link HttpTransport}: {@code java.net.HttpURLConnection} (on Android, the
 * platform's own implementation). Keeps connections alive between calls, follows no redirect,
 * reads error bodies like any other, and cuts the connection when a body is closed before its end.
 *
 * <p>What {@code HttpURLConnection} does on its own: it supports {@code GET HEAD POST PUT DELETE
 * OPTIONS TRACE}, not {@code PATCH}; it labels a {@code POST} that names no {@code Content-Type}
 * {@code application/x-www-form-urlencoded}; and the JDK's implementation may send a {@code POST}
 * once more when a kept-alive connection turns out closed ({@code sun.net.http.retryPost}), so give
 * costly calls an {@code Idempotency-Key}. Plug another transport when any of that matters.
 */
public final class HttpUrlConnectionTransport implements HttpTransport {
    private final int connectTimeoutMillis;
    private final int readTimeoutMillis;

    /** 10 s to connect, 60 s of silence at most between two pieces of an answer. */
    public HttpUrlConnectionTransport() {
        this(10_000, 60_000);
    }

    /**
     * @param connectTimeoutMillis how long to wait for the connection, milliseconds
     * @param readTimeoutMillis the longest silence between two pieces of an answer, milliseconds
     *     (raise it for event streams that pause longer; 0 waits for ever)
     */
    public HttpUrlConnectionTransport(int connectTimeoutMillis, int readTimeoutMillis) {
        this.connectTimeoutMillis = connectTimeoutMillis;
        this.readTimeoutMillis = readTimeoutMillis;
    }

    @Override
    public Response execute(Request request) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) new URL(request.url()).openConnection();
        try {
            connection.setRequestMethod(request.method());
            connection.setInstanceFollowRedirects(false);
            connection.setUseCaches(false);
            connection.setConnectTimeout(connectTimeoutMillis);
            connection.setReadTimeout(readTimeoutMillis);
            for (Map.Entry<String, String> field : request.headers().entrySet()) {
                connection.setRequestProperty(field.getKey(), field.getValue());
            }
            byte[] body = request.body();
            boolean sendsBody = body.length > 0 || request.method().equals("POST") || request.method().equals("PUT");
            if (sendsBody) {
                // Buffered, not fixedLengthStreamingMode: in streaming mode HttpURLConnection turns
                // a 401 into an HttpRetryException and the Keyward-Error field would be lost.
                connection.setDoOutput(true);
                try (OutputStream out = connection.getOutputStream()) {
                    out.write(body);
                }
            }
            int status = connection.getResponseCode();
            InputStream stream = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
            return new ConnectionResponse(connection, status, stream);
        } catch (IOException | RuntimeException failure) {
            connection.disconnect();
            throw failure;
        }
    }

    private static final class ConnectionResponse implements Response {
        private final HttpURLConnection connection;
        private final int status;
        private final Map<String, List<String>> headers;
        private final TrackingStream body;

        ConnectionResponse(HttpURLConnection connection, int status, InputStream stream) {
            this.connection = connection;
            this.status = status;
            Map<String, List<String>> fields = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            for (Map.Entry<String, List<String>> field : connection.getHeaderFields().entrySet()) {
                if (field.getKey() == null) continue; // the status line
                fields.computeIfAbsent(field.getKey(), k -> new ArrayList<>()).addAll(field.getValue());
            }
            this.headers = Collections.unmodifiableMap(fields);
            this.body = new TrackingStream(stream == null ? new ByteArrayInputStream(new byte[0]) : stream);
        }

        @Override
        public int status() {
            return status;
        }

        @Override
        public String header(String name) {
            List<String> values = headers.get(name);
            return values == null || values.isEmpty() ? null : values.get(0);
        }

        @Override
        public Map<String, List<String>> headers() {
            return headers;
        }

        @Override
        public InputStream body() {
            return body;
        }

        @Override
        public void close() {
            boolean whole = body.ended;
            try {
                body.close();
            } catch (IOException ignored) {
                // the connection is dropped below either way
            }
            // A body left unread would otherwise be drained (or the connection kept busy): cut it.
            if (!whole) connection.disconnect();
        }
    }

    /** Notes whether the body was read to its end. */
    private static final class TrackingStream extends FilterInputStream {
        volatile boolean ended;

        TrackingStream(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b < 0) ended = true;
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            int n = super.read(buffer, offset, length);
            if (n < 0) ended = true;
            return n;
        }
    }
}
