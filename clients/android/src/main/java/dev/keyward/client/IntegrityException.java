package dev.keyward.client;

/**
 * What an {@link IntegrityTokenSource} throws, in the terms the client acts on. The adapter over
 * Google's {@code StandardIntegrityManager} maps {@code StandardIntegrityException.getErrorCode()}
 * ({@code StandardIntegrityErrorCode}) onto a {@link Reason}.
 */
public final class IntegrityException extends Exception {
    private static final long serialVersionUID = 1L;

    /** How the client reacts. */
    public enum Reason {
        /**
         * The prepared token provider is no longer usable ({@code INTEGRITY_TOKEN_PROVIDER_INVALID}):
         * the client calls {@link IntegrityTokenSource#prepare()} again and requests once more.
         */
        PROVIDER_INVALID,
        /**
         * Play Integrity is not available on this device ({@code API_NOT_AVAILABLE},
         * {@code PLAY_STORE_NOT_FOUND}, {@code PLAY_SERVICES_NOT_FOUND}, ...): the client throws
         * {@link KeywardException.Kind#UNSUPPORTED_DEVICE}.
         */
        UNSUPPORTED,
        /** Anything else (network, quota, transient Google errors): {@link KeywardException.Kind#INTEGRITY_SERVICE_FAILED}. */
        FAILED
    }

    private final Reason reason;

    /**
     * @param reason how the client reacts
     * @param message text for logs (an error code name; never a token)
     * @param cause Google's exception, or null
     */
    public IntegrityException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    /** How the client reacts. */
    public Reason reason() {
        return reason;
    }
}
