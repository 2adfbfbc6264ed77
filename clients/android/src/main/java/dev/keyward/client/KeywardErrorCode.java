package dev.keyward.client;

/**
 * The error codes of Keyward's API, as they appear in {@code {"error": "<code>"}} and in the
 * {@code Keyward-Error} response field of every answer Keyward writes itself (README, "API").
 */
public enum KeywardErrorCode {
    /** 400: malformed JSON, base64, field types, a non-canonical proxy path. */
    BAD_REQUEST("bad_request"),
    /** 400: unknown, expired, already spent or malformed challenge. */
    CHALLENGE_INVALID("challenge_invalid"),
    /** 401: attestation, assertion or integrity verdict rejected. */
    ATTESTATION_INVALID("attestation_invalid"),
    /** 401: missing, malformed, expired or badly signed session; unknown or revoked device. */
    SESSION_INVALID("session_invalid"),
    /** 401: the server does not know this App Attest key (iOS only). */
    KEY_UNKNOWN("key_unknown"),
    /** 401: the install credential is unknown, expired, superseded, copied or revoked ({@code /v1/refresh}). */
    CREDENTIAL_INVALID("credential_invalid"),
    /** 401: the deployment requires a publishable app key ({@code X-Keyward-App-Key}) and none it knows came. */
    APP_KEY_INVALID("app_key_invalid"),
    /** 403: method or path not allowlisted; device revoked. */
    FORBIDDEN("forbidden"),
    /** 403: the provider serves attested devices only and this install was admitted without a verified proof. */
    ATTESTATION_REQUIRED("attestation_required"),
    /** 403: the call's JSON body asks for what the provider's allow rule does not admit (a model, more output tokens, a stream); change the request, do not retry it. */
    BODY_RULE_REFUSED("body_rule_refused"),
    /** 404: unknown route or provider. */
    NOT_FOUND("not_found"),
    /** 405: wrong method on a JSON endpoint. */
    METHOD_NOT_ALLOWED("method_not_allowed"),
    /** 413: body over the handshake limit or the provider's {@code max_body_bytes}. */
    PAYLOAD_TOO_LARGE("payload_too_large"),
    /** 429: a limit was hit; see {@link KeywardRefusal#retryAfterSeconds()}. */
    RATE_LIMITED("rate_limited"),
    /** 429: this install spent its daily credits; {@code Retry-After} is the time to the next UTC midnight. */
    INSTALL_BUDGET_EXHAUSTED("install_budget_exhausted"),
    /** 429: the whole app spent its daily credits; {@code Retry-After} is the time to the next UTC midnight. */
    APP_BUDGET_EXHAUSTED("app_budget_exhausted"),
    /** 500: misconfiguration on the server. */
    INTERNAL_ERROR("internal_error"),
    /** 501: the platform is not configured on this deployment. */
    NOT_IMPLEMENTED("not_implemented"),
    /** 502: the provider is unreachable or broke the exchange. */
    UPSTREAM_ERROR("upstream_error"),
    /** 503: the store is down; see {@link KeywardRefusal#retryAfterSeconds()}. */
    UNAVAILABLE("unavailable"),
    /** 504: the provider did not answer in time. */
    UPSTREAM_TIMEOUT("upstream_timeout"),
    /** A code this library version does not know yet; {@link KeywardRefusal#wireCode()} keeps it as sent. */
    OTHER("");

    private final String wire;

    KeywardErrorCode(String wire) {
        this.wire = wire;
    }

    /** The code as Keyward writes it ({@code session_invalid}); empty for {@link #OTHER}. */
    public String wire() {
        return wire;
    }

    /** The code for its wire form; unknown text (or null) gives {@link #OTHER}. */
    public static KeywardErrorCode fromWire(String code) {
        if (code != null && !code.isEmpty()) {
            for (KeywardErrorCode value : values()) {
                if (value.wire.equals(code)) return value;
            }
        }
        return OTHER;
    }
}
