package dev.keyward.client;

/** A Keyward session as the handshake routes return it: {@code {"token": "<JWT>", "expires_at": <unix s>}}. */
public final class KeywardSession {
    private final String token;
    private final long expiresAt;
    private final long localExpiresAt;

    /**
     * @param token the ES256 JWT (RFC 7519), sent as {@code Authorization: Bearer <token>}
     * @param expiresAt when the server stops accepting it, unix seconds
     */
    public KeywardSession(String token, long expiresAt) {
        this(token, expiresAt, expiresAt);
    }

    KeywardSession(String token, long expiresAt, long localExpiresAt) {
        this.token = token;
        this.expiresAt = expiresAt;
        this.localExpiresAt = localExpiresAt;
    }

    /**
     * The session as it arrived at {@code localNow} (the device's clock, unix seconds): it expires
     * on the device's clock after its lifetime, {@code exp − iat} of the JWT's claims (RFC 7519
     * §4.1.4, §4.1.6), so a device clock that is off does not make every session look expired (or
     * never). Without a readable {@code iat}, the server's {@code expires_at} on the device's clock.
     */
    static KeywardSession received(String token, long expiresAt, long localNow) {
        Long issuedAt = issuedAt(token);
        long lifetime = issuedAt != null && expiresAt > issuedAt ? expiresAt - issuedAt : expiresAt - localNow;
        return new KeywardSession(token, expiresAt, localNow + lifetime);
    }

    /** The JWT's {@code iat}, unix seconds; null when the payload is not readable JSON with a number there. */
    private static Long issuedAt(String token) {
        String[] parts = token.split("\\.", -1);
        if (parts.length != 3) return null;
        try {
            String payload = new String(java.util.Base64.getUrlDecoder().decode(parts[1]), java.nio.charset.StandardCharsets.UTF_8);
            java.util.Map<String, Object> claims = Json.parseObject(payload);
            Object iat = claims == null ? null : claims.get("iat");
            return iat instanceof Long ? (Long) iat : null;
        } catch (IllegalArgumentException notBase64) {
            return null;
        }
    }

    /** When the session expires on the device's clock, unix seconds (what renewal is decided on). */
    long localExpiresAt() {
        return localExpiresAt;
    }

    /** The JWT. A secret: never log it. */
    public String token() {
        return token;
    }

    /** Expiry on the server's clock, unix seconds (the server allows 60 s past it). */
    public long expiresAt() {
        return expiresAt;
    }

    @Override
    public String toString() {
        return "KeywardSession(expiresAt=" + expiresAt + ")";
    }
}
