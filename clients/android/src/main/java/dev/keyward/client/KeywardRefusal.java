package dev.keyward.client;

import java.util.Objects;

/** One refusal written by Keyward itself (never a provider's answer): what the app needs to decide. */
public final class KeywardRefusal {
    private final KeywardErrorCode code;
    private final String wireCode;
    private final int status;
    private final Integer retryAfterSeconds;
    private final String requestId;

    /**
     * @param wireCode the code as sent ({@code Keyward-Error} or the JSON body's {@code error})
     * @param status the HTTP status (RFC 9110 §15)
     * @param retryAfterSeconds {@code Retry-After} in seconds, or null
     * @param requestId {@code X-Request-Id}, or null
     */
    public KeywardRefusal(String wireCode, int status, Integer retryAfterSeconds, String requestId) {
        this.wireCode = Objects.requireNonNull(wireCode);
        this.code = KeywardErrorCode.fromWire(wireCode);
        this.status = status;
        this.retryAfterSeconds = retryAfterSeconds;
        this.requestId = requestId;
    }

    /** The API code; {@link KeywardErrorCode#OTHER} for one this version does not know. */
    public KeywardErrorCode code() {
        return code;
    }

    /** The code exactly as Keyward sent it. */
    public String wireCode() {
        return wireCode;
    }

    /** The HTTP status. */
    public int status() {
        return status;
    }

    /**
     * {@code Retry-After} in seconds (RFC 9110 §10.2.3), sent with 429 and 503; null when absent or
     * not in delay-seconds form (Keyward always sends seconds).
     */
    public Integer retryAfterSeconds() {
        return retryAfterSeconds;
    }

    /** {@code X-Request-Id}: quote it to the operator, who finds the reason in the server's log. */
    public String requestId() {
        return requestId;
    }

    /** Keyward's own refusal, told by its {@code Keyward-Error} field; null for a relayed answer. */
    static KeywardRefusal fromHeaders(HttpTransport.Response response) {
        String code = response.header("Keyward-Error");
        if (code == null) return null;
        return new KeywardRefusal(code, response.status(), parseRetryAfter(response.header("Retry-After")), response.header("X-Request-Id"));
    }

    /** Delay-seconds (1*DIGIT) or null: an HTTP-date form is not a number of seconds. */
    static Integer parseRetryAfter(String value) {
        if (value == null || value.isEmpty() || value.length() > 9) return null;
        for (int i = 0; i < value.length(); i++) {
            if (value.charAt(i) < '0' || value.charAt(i) > '9') return null;
        }
        return Integer.valueOf(value);
    }

    @Override
    public String toString() {
        return status + " " + wireCode + (retryAfterSeconds != null ? " (Retry-After " + retryAfterSeconds + " s)" : "")
                + (requestId != null ? " request " + requestId : "");
    }
}
