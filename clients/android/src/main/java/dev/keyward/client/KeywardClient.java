package dev.keyward.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The Android app's side of Keyward: proves the install with Play Integrity, keeps a session, and
 * calls providers through {@code /p/<provider>/<path>}.
 *
 * <ul>
 *   <li>The first session: a challenge, the Play Integrity {@code requestHash} =
 *       base64url(SHA-256(challenge bytes ‖ install id)), a token from the {@link IntegrityTokenSource},
 *       {@code POST /v1/attest/android} → a session and an install credential, which the
 *       {@link InstallCredentialStore} keeps.</li>
 *   <li>Later sessions: {@code POST /v1/refresh} with the credential → a session and the next
 *       credential (saved before the session is used; Keyward makes no call to Google). A
 *       credential Keyward refuses ({@code credential_invalid}) is forgotten and Play Integrity runs again.</li>
 *   <li>The session is cached and renewed {@link KeywardConfiguration#refreshMarginSeconds()} before
 *       it expires, by the configured clock: its lifetime ({@code exp − iat}) counted from when it
 *       arrived, so a device clock that is off changes nothing; concurrent callers that need one
 *       share one handshake.</li>
 *   <li>A request Keyward itself refuses with 401 {@code session_invalid} (told by the
 *       {@code Keyward-Error} field) is sent once more after a new handshake. A provider's own
 *       answer, whatever its status, is returned as is: relayed answers never carry that field.</li>
 *   <li>{@code X-Keyward-App-Key} goes on every handshake route when an app key is configured.</li>
 * </ul>
 *
 * <p>Every method blocks (network, Play): call them off the main thread. Thread-safe.
 */
public final class KeywardClient {
    private static final int HANDSHAKE_BODY_LIMIT = 64 * 1024;

    private final KeywardConfiguration configuration;
    private final IntegrityTokenSource integrity;
    private final InstallCredentialStore credentials;
    private final HttpTransport transport;
    private final SessionCache sessions = new SessionCache();
    private final Object preparation = new Object();
    private boolean prepared;

    /** The client over {@link HttpUrlConnectionTransport}. */
    public KeywardClient(KeywardConfiguration configuration, IntegrityTokenSource integrity, InstallCredentialStore credentials) {
        this(configuration, integrity, credentials, new HttpUrlConnectionTransport());
    }

    /**
     * @param configuration Keyward's origin and the client's policy
     * @param integrity the app's adapter over {@code StandardIntegrityManager}
     * @param credentials the app's adapter over EncryptedSharedPreferences
     * @param transport how HTTP is spoken
     */
    public KeywardClient(KeywardConfiguration configuration, IntegrityTokenSource integrity, InstallCredentialStore credentials, HttpTransport transport) {
        this.configuration = configuration;
        this.integrity = integrity;
        this.credentials = credentials;
        this.transport = transport;
    }

    /** The configuration in force. */
    public KeywardConfiguration configuration() {
        return configuration;
    }

    // Calls

    /**
     * Sends {@code request} through Keyward and returns the provider's whole answer.
     *
     * @return the provider's answer, whatever its status (a provider's 401 is returned, not thrown)
     * @throws KeywardException {@code REFUSED} when Keyward itself refused (with {@code Retry-After}
     *     on 429 and 503); {@code UNSUPPORTED_DEVICE}; transport, integrity and store failures
     */
    public ProviderResponse send(ProviderRequest request) throws KeywardException {
        HttpTransport.Response answer = exchange(request);
        try {
            return new ProviderResponse(answer.status(), answer.headers(), readAll(answer.body(), Integer.MAX_VALUE));
        } catch (IOException failure) {
            throw transportFailure(failure);
        } finally {
            closeQuietly(answer);
        }
    }

    /**
     * Sends {@code request} and returns as soon as the provider's head arrives; the body (or its
     * server-sent events) follows on the returned stream as each piece arrives.
     *
     * @throws KeywardException as {@link #send}, for everything before the head; body failures come from the stream
     */
    public KeywardStream stream(ProviderRequest request) throws KeywardException {
        return new KeywardStream(exchange(request));
    }

    /**
     * A valid session, from the cache or a new handshake (for apps that call Keyward themselves).
     *
     * @throws KeywardException as the handshake
     */
    public KeywardSession session() throws KeywardException {
        return sessions.valid(nowSeconds(), configuration.refreshMarginSeconds(), this::renew);
    }

    private long nowSeconds() {
        return Math.floorDiv(configuration.clock().millis(), 1000L);
    }

    /**
     * Forgets the session and the install credential: the next call runs Play Integrity again (the
     * install id stays, so Keyward sees the same device).
     *
     * @throws KeywardException {@code CREDENTIAL_STORE_FAILED}
     */
    public void reset() throws KeywardException {
        sessions.clear();
        try {
            credentials.deleteCredential();
        } catch (IOException failure) {
            throw storeFailure(failure);
        }
    }

    /** The request with its session; a Keyward {@code session_invalid} renews the session and sends once more. */
    HttpTransport.Response exchange(ProviderRequest request) throws KeywardException {
        request.validate();
        boolean retried = false;
        while (true) {
            KeywardSession current = session();
            HttpTransport.Response answer = execute(proxyRequest(request, current));
            KeywardRefusal refusal = KeywardRefusal.fromHeaders(answer);
            if (refusal == null) return answer;
            closeQuietly(answer);
            if (refusal.code() == KeywardErrorCode.SESSION_INVALID && !retried) {
                retried = true;
                sessions.invalidate(current.token());
                continue;
            }
            throw KeywardException.refused(refusal);
        }
    }

    private HttpTransport.Request proxyRequest(ProviderRequest request, KeywardSession session) {
        String url = configuration.baseUrl() + request.proxyPath();
        if (request.query() != null && !request.query().isEmpty()) url += "?" + request.query();
        Map<String, String> headers = new LinkedHashMap<>();
        for (Map.Entry<String, String> field : request.headers().entrySet()) {
            if (!field.getKey().equalsIgnoreCase("Authorization")) headers.put(field.getKey(), field.getValue());
        }
        headers.put("Authorization", "Bearer " + session.token());
        return new HttpTransport.Request(request.method(), url, headers, request.body());
    }

    // Handshakes

    /** A refresh with the stored credential, or Play Integrity when there is none or Keyward refused it. */
    private KeywardSession renew() throws KeywardException {
        String credential = load(() -> credentials.loadCredential());
        if (credential != null) {
            try {
                return refresh(credential);
            } catch (KeywardException refused) {
                if (refused.code() != KeywardErrorCode.CREDENTIAL_INVALID) throw refused;
                try {
                    credentials.deleteCredential();
                } catch (IOException failure) {
                    throw storeFailure(failure);
                }
            }
        }
        return attest();
    }

    private KeywardSession refresh(String credential) throws KeywardException {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("install_credential", credential);
        return sessionFrom(postJson("/v1/refresh", fields));
    }

    private KeywardSession attest() throws KeywardException {
        String installId = installId();
        prepareOnce();
        Map<String, Object> challengeBody = postJson("/v1/challenge", null);
        Object challenge = challengeBody.get("challenge");
        String requestHash = challenge instanceof String ? HandshakeEncoding.androidRequestHash((String) challenge, installId) : null;
        if (requestHash == null) throw malformed("challenge");
        String token = integrityToken(requestHash);
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("integrity_token", token);
        fields.put("challenge", (String) challenge);
        fields.put("install_id", installId);
        if (configuration.packageName() != null) fields.put("package_name", configuration.packageName());
        return sessionFrom(postJson("/v1/attest/android", fields));
    }

    /** The session of a 200 handshake answer, after the credential it carries is saved. */
    private KeywardSession sessionFrom(Map<String, Object> body) throws KeywardException {
        Object token = body.get("token");
        Object expiresAt = body.get("expires_at");
        Object credential = body.get("install_credential");
        if (!(token instanceof String) || !(expiresAt instanceof Long) || !(credential instanceof String)) throw malformed("session");
        // Each credential works once: the next one must be kept before the session is used.
        try {
            credentials.saveCredential((String) credential);
        } catch (IOException failure) {
            throw storeFailure(failure);
        }
        return KeywardSession.received((String) token, (Long) expiresAt, nowSeconds());
    }

    private String installId() throws KeywardException {
        String stored = load(() -> credentials.loadInstallId());
        if (stored != null) return stored;
        String made = UUID.randomUUID().toString().toLowerCase(java.util.Locale.ROOT);
        try {
            credentials.saveInstallId(made);
        } catch (IOException failure) {
            throw storeFailure(failure);
        }
        return made;
    }

    private void prepareOnce() throws KeywardException {
        synchronized (preparation) {
            if (prepared) return;
            try {
                integrity.prepare();
            } catch (IntegrityException failure) {
                throw integrityFailure(failure);
            }
            prepared = true;
        }
    }

    /** A token for {@code requestHash}; a provider Play no longer accepts is prepared again, once. */
    private String integrityToken(String requestHash) throws KeywardException {
        try {
            return integrity.request(requestHash);
        } catch (IntegrityException failure) {
            if (failure.reason() != IntegrityException.Reason.PROVIDER_INVALID) throw integrityFailure(failure);
        }
        synchronized (preparation) {
            prepared = false;
        }
        prepareOnce();
        try {
            return integrity.request(requestHash);
        } catch (IntegrityException failure) {
            throw integrityFailure(failure);
        }
    }

    /**
     * POSTs a JSON object (or nothing) to a handshake route and returns the 200 body's object.
     *
     * @throws KeywardException {@code REFUSED} for any other status
     */
    private Map<String, Object> postJson(String path, Map<String, String> fields) throws KeywardException {
        Map<String, String> headers = new LinkedHashMap<>();
        if (configuration.appKey() != null) headers.put("X-Keyward-App-Key", configuration.appKey());
        byte[] body = new byte[0];
        if (fields != null) {
            headers.put("Content-Type", "application/json");
            body = Json.writeObject(fields).getBytes(StandardCharsets.UTF_8);
        }
        HttpTransport.Response answer = execute(new HttpTransport.Request("POST", configuration.baseUrl() + path, headers, body));
        String text;
        try {
            text = new String(readAll(answer.body(), HANDSHAKE_BODY_LIMIT), StandardCharsets.UTF_8);
        } catch (IOException failure) {
            throw transportFailure(failure);
        } finally {
            closeQuietly(answer);
        }
        Map<String, Object> object = Json.parseObject(text);
        if (answer.status() != 200) {
            KeywardRefusal refusal = KeywardRefusal.fromHeaders(answer);
            if (refusal == null) {
                // A front (nginx, a load balancer) answered without the field: the body's code if any.
                Object code = object == null ? null : object.get("error");
                refusal = new KeywardRefusal(code instanceof String ? (String) code : "http_" + answer.status(), answer.status(),
                        KeywardRefusal.parseRetryAfter(answer.header("Retry-After")), answer.header("X-Request-Id"));
            }
            throw KeywardException.refused(refusal);
        }
        if (object == null) throw malformed(path);
        return object;
    }

    // Helpers

    private HttpTransport.Response execute(HttpTransport.Request request) throws KeywardException {
        try {
            return transport.execute(request);
        } catch (IOException failure) {
            throw transportFailure(failure);
        }
    }

    private interface StoreRead {
        String read() throws IOException;
    }

    private static String load(StoreRead read) throws KeywardException {
        try {
            return read.read();
        } catch (IOException failure) {
            throw storeFailure(failure);
        }
    }

    static byte[] readAll(InputStream in, int limit) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buffer = new byte[8192];
        for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
            if (out.size() + n > limit) throw new IOException("answer larger than " + limit + " bytes");
            out.write(buffer, 0, n);
        }
        return out.toByteArray();
    }

    private static void closeQuietly(HttpTransport.Response answer) {
        try {
            answer.close();
        } catch (IOException ignored) {
            // nothing left to give the caller
        }
    }

    private static KeywardException transportFailure(IOException failure) {
        // The message names the failure's class; the cause keeps the platform's detail.
        return KeywardException.of(KeywardException.Kind.TRANSPORT, failure.getClass().getSimpleName(), failure);
    }

    private static KeywardException storeFailure(IOException failure) {
        return KeywardException.of(KeywardException.Kind.CREDENTIAL_STORE_FAILED, failure.getClass().getSimpleName(), failure);
    }

    private static KeywardException malformed(String what) {
        return KeywardException.of(KeywardException.Kind.MALFORMED_ANSWER, "unreadable answer: " + what, null);
    }

    private static KeywardException integrityFailure(IntegrityException failure) {
        KeywardException.Kind kind = failure.reason() == IntegrityException.Reason.UNSUPPORTED
                ? KeywardException.Kind.UNSUPPORTED_DEVICE : KeywardException.Kind.INTEGRITY_SERVICE_FAILED;
        return KeywardException.of(kind, "Play Integrity: " + failure.getMessage(), failure);
    }
}
