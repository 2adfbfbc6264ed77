package dev.keyward.client;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** A provider's whole answer as Keyward relayed it, whatever its status (a provider's 401 is returned, not thrown). */
public final class ProviderResponse {
    private final int status;
    private final Map<String, List<String>> headers;
    private final byte[] body;

    ProviderResponse(int status, Map<String, List<String>> headers, byte[] body) {
        this.status = status;
        this.headers = headers;
        this.body = body;
    }

    /** The provider's status code. */
    public int status() {
        return status;
    }

    /** The first value of {@code name} (case-insensitive), or null. */
    public String header(String name) {
        List<String> values = headers.get(name);
        return values == null || values.isEmpty() ? null : values.get(0);
    }

    /** Every header field (case-insensitive names). */
    public Map<String, List<String>> headers() {
        return headers;
    }

    /** The body bytes (a copy). */
    public byte[] body() {
        return body.clone();
    }

    /** The body as UTF-8 text. */
    public String bodyText() {
        return new String(body, StandardCharsets.UTF_8);
    }
}
