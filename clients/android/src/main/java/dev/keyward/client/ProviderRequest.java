package dev.keyward.client;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** One call to a provider through Keyward: {@code METHOD /p/<provider><path>[?query]}. Immutable; build with {@link #builder}. */
public final class ProviderRequest {
    private final String method;
    private final String provider;
    private final String path;
    private final String query;
    private final Map<String, String> headers;
    private final byte[] body;

    private ProviderRequest(Builder builder) {
        method = builder.method;
        provider = builder.provider;
        path = builder.path;
        query = builder.query;
        headers = Collections.unmodifiableMap(new LinkedHashMap<>(builder.headers));
        body = builder.body.clone();
    }

    /**
     * A request builder, {@code GET} by default.
     *
     * @param provider the provider's name as in the server's {@code providers.toml} ({@code openai})
     * @param path the provider path, percent-encoded, starting with {@code /} ({@code /v1/chat/completions}); sent as is
     */
    public static Builder builder(String provider, String path) {
        return new Builder(provider, path);
    }

    /** {@code GET <path>[?query]} with no body; {@code query} percent-encoded without {@code ?}, or null. */
    public static ProviderRequest get(String provider, String path, String query) {
        return builder(provider, path).query(query).build();
    }

    /** A JSON {@code POST}: {@code Content-Type: application/json} and {@code json} as UTF-8. */
    public static ProviderRequest postJson(String provider, String path, String json) {
        return builder(provider, path).method("POST").header("Content-Type", "application/json")
                .body(json.getBytes(StandardCharsets.UTF_8)).build();
    }

    /** The method, upper case. */
    public String method() {
        return method;
    }

    /** The provider's name. */
    public String provider() {
        return provider;
    }

    /** The provider path as sent. */
    public String path() {
        return path;
    }

    /** The query as sent (without {@code ?}), or null. */
    public String query() {
        return query;
    }

    /** Extra header fields (read-only). {@code Authorization} is the client's own and replaced. */
    public Map<String, String> headers() {
        return headers;
    }

    /** The body (a copy); empty for none. */
    public byte[] body() {
        return body.clone();
    }

    /** The path Keyward sees: {@code /p/<provider><path>}. */
    String proxyPath() {
        return "/p/" + provider + path;
    }

    /** RFC 3986 §3.3 {@code pchar} and {@code /}: unreserved, sub-delims, {@code :}, {@code @}, and {@code %} of a percent-encoding. */
    private static final String PATH_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@%/";

    /** Checks the parts that would otherwise form a different URL than intended. @throws KeywardException {@code INVALID_REQUEST} */
    void validate() throws KeywardException {
        if (provider.isEmpty() || !provider.chars().allMatch(c -> (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
            throw invalid("provider name must be letters, digits, '_' or '-'");
        }
        if (!path.startsWith("/") || !path.chars().allMatch(c -> PATH_CHARACTERS.indexOf(c) >= 0)) {
            throw invalid("path must start with '/' and be percent-encoded (RFC 3986 pchar and '/')");
        }
        // Keyward refuses dot segments (they would name another path once resolved): say so here.
        for (String segment : path.split("/", -1)) {
            if (segment.equals(".") || segment.equals("..")) throw invalid("path must not contain '.' or '..' segments");
        }
        if (query != null && !query.chars().allMatch(c -> c == '?' || PATH_CHARACTERS.indexOf(c) >= 0)) {
            throw invalid("query must be percent-encoded (RFC 3986 query characters)");
        }
        if (method.isEmpty() || !method.chars().allMatch(c -> (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '-')) {
            throw invalid("method must be a token");
        }
        for (String name : headers.keySet()) {
            if (name.isEmpty() || !name.chars().allMatch(c -> c > 0x20 && c < 0x7F && c != ':')) throw invalid("header name must be a token");
        }
    }

    private static KeywardException invalid(String why) {
        return KeywardException.of(KeywardException.Kind.INVALID_REQUEST, why, null);
    }

    /** Builds a {@link ProviderRequest}. */
    public static final class Builder {
        private String method = "GET";
        private final String provider;
        private final String path;
        private String query;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private byte[] body = new byte[0];

        private Builder(String provider, String path) {
            this.provider = provider;
            this.path = path;
        }

        /** The method token ({@code POST}). */
        public Builder method(String method) {
            this.method = method;
            return this;
        }

        /** The query, percent-encoded, without {@code ?}; null or empty for none. */
        public Builder query(String query) {
            this.query = query;
            return this;
        }

        /** Adds (or replaces) a header field. */
        public Builder header(String name, String value) {
            headers.put(name, value);
            return this;
        }

        /** The body bytes (copied). */
        public Builder body(byte[] body) {
            this.body = body.clone();
            return this;
        }

        /** The request. */
        public ProviderRequest build() {
            return new ProviderRequest(this);
        }
    }
}
