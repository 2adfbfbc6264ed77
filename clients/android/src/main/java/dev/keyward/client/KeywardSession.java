package dev.keyward.client;

/** A Keyward session as the handshake routes return it: {@code {"token": "<JWT>", "expires_at": <unix s>}}. */
public final class KeywardSession {
    private final String token;
    private final long expiresAt;

    /**
     * @param token the ES256 JWT (RFC 7519), sent as {@code Authorization: Bearer <token>}
     * @param expiresAt when the server stops accepting it, unix seconds
     */
    public KeywardSession(String token, long expiresAt) {
        this.token = token;
        this.expiresAt = expiresAt;
    }

    /** The JWT. A secret: never log it. */
    public String token() {
        return token;
    }

    /** Expiry, unix seconds (the server allows 60 s past it). */
    public long expiresAt() {
        return expiresAt;
    }

    @Override
    public String toString() {
        return "KeywardSession(expiresAt=" + expiresAt + ")";
    }
}
