package dev.keyward.client;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How the client talks HTTP: {@link HttpUrlConnectionTransport} by default; an app that uses
 * OkHttp (or needs {@code PATCH}, which {@code HttpURLConnection} refuses) plugs its own.
 *
 * <p>{@link #execute} returns as soon as the response head has arrived, with the body still to be
 * read, so server-sent events reach the caller as they arrive. It must send the URL exactly as
 * given (no re-encoding of the percent-encoded path), follow no redirects, answer every status
 * (4xx and 5xx included) as a {@link Response} rather than an exception, and never retry a request
 * on its own. It is called from several threads at once.
 */
public interface HttpTransport {
    /**
     * Sends {@code request} and returns once the head has arrived.
     *
     * @throws IOException when the exchange fails before the head
     */
    Response execute(Request request) throws IOException;

    /** One request: method, absolute URL, header fields, body (empty for none). */
    final class Request {
        private final String method;
        private final String url;
        private final Map<String, String> headers;
        private final byte[] body;

        /**
         * @param method the method token ({@code GET}, {@code POST})
         * @param url the absolute URL, percent-encoded, sent as is
         * @param headers field names and values, in order
         * @param body the body bytes; empty for none
         */
        public Request(String method, String url, Map<String, String> headers, byte[] body) {
            this.method = method;
            this.url = url;
            this.headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
            this.body = body.clone();
        }

        /** The method. */
        public String method() {
            return method;
        }

        /** The absolute URL. */
        public String url() {
            return url;
        }

        /** The path and query of {@link #url()} ({@code /p/openai/v1/models?x=1}). */
        public String target() {
            int scheme = url.indexOf("://");
            int slash = scheme < 0 ? -1 : url.indexOf('/', scheme + 3);
            return slash < 0 ? "/" : url.substring(slash);
        }

        /** The header fields (read-only). */
        public Map<String, String> headers() {
            return headers;
        }

        /** The body (a copy). */
        public byte[] body() {
            return body.clone();
        }
    }

    /** An answer whose head has arrived; close it when done (closing before the end cancels the transfer). */
    interface Response extends Closeable {
        /** The status code. */
        int status();

        /** The first value of the field {@code name} (case-insensitive), or null. */
        String header(String name);

        /** Every field, names as received, values in order. */
        Map<String, List<String>> headers();

        /** The body as it arrives; read to the end or close. */
        InputStream body();
    }
}
