package dev.keyward.client;

/**
 * Everything {@link KeywardClient} throws. {@link #kind()} says what failed; for
 * {@link Kind#REFUSED}, {@link #refusal()} carries Keyward's code, status, {@code Retry-After} and
 * request id. Messages never hold a session token, an install credential or an integrity token.
 */
public final class KeywardException extends Exception {
    private static final long serialVersionUID = 1L;

    /** What failed. */
    public enum Kind {
        /** Keyward refused the request (a handshake or the proxy route); see {@link #refusal()}. */
        REFUSED,
        /** This device cannot produce a Play Integrity token (no Play Store or Play services): degrade the feature, do not retry. */
        UNSUPPORTED_DEVICE,
        /** The Play Integrity call failed for another reason (text for logs); retry later. */
        INTEGRITY_SERVICE_FAILED,
        /** Reading or writing the install id or credential failed (text for logs). */
        CREDENTIAL_STORE_FAILED,
        /** The request could not be built (a provider name, path, query or method that would form a different URL). */
        INVALID_REQUEST,
        /** The network exchange failed before an answer (or mid-body) (text for logs). */
        TRANSPORT,
        /** Keyward answered something this library cannot read (a handshake body that is not a session). */
        MALFORMED_ANSWER
    }

    private final Kind kind;
    private final KeywardRefusal refusal;

    private KeywardException(Kind kind, KeywardRefusal refusal, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
        this.refusal = refusal;
    }

    static KeywardException refused(KeywardRefusal refusal) {
        return new KeywardException(Kind.REFUSED, refusal, "Keyward refused: " + refusal, null);
    }

    static KeywardException of(Kind kind, String message, Throwable cause) {
        return new KeywardException(kind, null, message, cause);
    }

    /** What failed. */
    public Kind kind() {
        return kind;
    }

    /** Keyward's refusal for {@link Kind#REFUSED}; null otherwise. */
    public KeywardRefusal refusal() {
        return refusal;
    }

    /** The API code of a refusal; null for other kinds. */
    public KeywardErrorCode code() {
        return refusal == null ? null : refusal.code();
    }

    /** {@code Retry-After} of a refusal, seconds; null for other kinds or when the server sent none. */
    public Integer retryAfterSeconds() {
        return refusal == null ? null : refusal.retryAfterSeconds();
    }
}
