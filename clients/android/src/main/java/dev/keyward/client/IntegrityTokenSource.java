package dev.keyward.client;

/**
 * Play Integrity's standard request behind an interface: the app passes an adapter over Google's
 * {@code StandardIntegrityManager} (README, "Android"), tests pass a fake.
 *
 * <p>Both methods block until Google answers; the client calls them on the thread that needs a
 * session (never call the client on the main thread). Google: "Make a standard API request"
 * (developer.android.com/google/play/integrity/standard): prepare the integrity token provider
 * once ({@code prepareIntegrityToken}), then request a token per handshake with a
 * {@code requestHash} ({@code StandardIntegrityTokenRequest.builder().setRequestHash(...)}).
 */
public interface IntegrityTokenSource {
    /**
     * Prepares the integrity token provider (warms up Play; may take seconds). The client calls it
     * before its first request, and again after {@link IntegrityException.Reason#PROVIDER_INVALID}.
     *
     * @throws IntegrityException when Play refuses or fails
     */
    void prepare() throws IntegrityException;

    /**
     * One integrity token bound to {@code requestHash}.
     *
     * @param requestHash base64url(SHA-256(challenge bytes ‖ UTF-8 install_id)), unpadded, 43 characters
     * @return the opaque token Play returned ({@code StandardIntegrityToken.token()})
     * @throws IntegrityException when Play refuses or fails
     */
    String request(String requestHash) throws IntegrityException;
}
