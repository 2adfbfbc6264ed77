package dev.keyward.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The library against a real Keyward ({@code keyward-demo android-fixture}): Play Integrity
 * through the fake Google in standard mode, refreshes, single flight, the session's end, the
 * provider's own answers, revocation, budgets and event streams. Each test is a new install (its
 * own credential store, so its own device and daily budget) with its own pinned clock.
 */
final class ClientAgainstKeywardTests {
    private static LiveKeyward keyward;

    @BeforeAll
    static void start() throws Exception {
        keyward = LiveKeyward.shared();
    }

    /** One install of the app: its store, its Play Integrity, its transport, its clock, its client. */
    private static final class Install {
        final InMemoryInstallCredentialStore store = new InMemoryInstallCredentialStore();
        final FixtureIntegrity integrity = new FixtureIntegrity(keyward);
        final CountingTransport transport = new CountingTransport();
        final TestClock clock;
        final KeywardClient client;

        Install() throws Exception {
            this(keyward.appKey);
        }

        Install(String appKey) throws Exception {
            clock = new TestClock(keyward.nowMillis());
            client = new KeywardClient(
                    KeywardConfiguration.builder(keyward.baseUrl).appKey(appKey).packageName(keyward.packageName).clock(clock)
                            .refreshMarginSeconds(MARGIN).build(),
                    integrity, store, transport);
        }

        /** Time passes for the device and for Keyward alike. */
        void advanceBothClocks(long seconds) throws Exception {
            keyward.advance(seconds);
            clock.advanceSeconds(seconds);
        }

        String deviceId() throws Exception {
            return HandshakeEncoding.deviceId(keyward.packageName, store.loadInstallId());
        }
    }

    /** The refresh margin the tests use: below the fixture's 60 s sessions (the default 60 s would renew at once). */
    private static final long MARGIN = 10;

    private static final ProviderRequest ECHO = ProviderRequest.get("fixture", "/v1/echo", null);

    @Test
    void firstCallAttestsWithPlayIntegrityAndIsProxied() throws Exception {
        Install install = new Install();
        long decodes = keyward.decodeCount();
        long echoes = keyward.providerRequests("/v1/echo");

        ProviderResponse answer = install.client.send(ProviderRequest.get("fixture", "/v1/echo", "q=a%20b"));

        assertEquals(200, answer.status());
        assertEquals("{\"method\":\"GET\",\"target\":\"/v1/echo?q=a%20b\"}", answer.bodyText());
        assertEquals("fixture", answer.header("x-provider"));
        assertEquals(1, install.transport.count("/v1/challenge"));
        assertEquals(1, install.transport.count("/v1/attest/android"));
        assertEquals(0, install.transport.count("/v1/refresh"));
        assertEquals(1, install.integrity.prepares.get());
        assertEquals(1, install.integrity.requests.get());
        assertEquals(decodes + 1, keyward.decodeCount());
        assertEquals(echoes + 1, keyward.providerRequests("/v1/echo"));

        // The install id is a lowercase UUID; the credential the answer carried is kept.
        String installId = install.store.loadInstallId();
        assertTrue(installId.matches("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), installId);
        assertEquals(43, install.store.loadCredential().length());

        // The attest body names the challenge; the requestHash Play got is the one Keyward computes from it.
        HttpTransport.Request attest = sentTo(install, "/v1/attest/android").get(0);
        Map<String, Object> fields = Json.parseObject(new String(attest.body(), StandardCharsets.UTF_8));
        assertEquals(installId, fields.get("install_id"));
        assertEquals(keyward.packageName, fields.get("package_name"));
        assertEquals(HandshakeEncoding.androidRequestHash((String) fields.get("challenge"), installId), install.integrity.lastRequestHash);
        // The app key goes on every handshake route.
        for (HttpTransport.Request sent : install.transport.sent) {
            if (sent.target().startsWith("/v1/")) assertEquals(keyward.appKey, sent.headers().get("X-Keyward-App-Key"), sent.target());
        }

        // A second call reuses the session.
        assertEquals(200, install.client.send(ECHO).status());
        assertEquals(1, install.transport.count("/v1/challenge"));
        assertEquals(decodes + 1, keyward.decodeCount());
    }

    @Test
    void renewalRefreshesWithTheCredentialAndDecodesNothing() throws Exception {
        Install install = new Install();
        KeywardSession first = install.client.session();
        String firstCredential = install.store.loadCredential();
        long decodes = keyward.decodeCount();

        // The client's clock reaches the refresh margin before expiry: the next call renews first.
        assertEquals(200, install.client.send(ECHO).status());
        assertEquals(0, install.transport.count("/v1/refresh"));
        install.advanceBothClocks(first.expiresAt() - install.clock.millis() / 1000 - MARGIN);
        assertEquals(200, install.client.send(ECHO).status());

        assertEquals(1, install.transport.count("/v1/refresh"));
        assertEquals(1, install.transport.count("/v1/attest/android"));
        assertEquals(1, install.integrity.requests.get());
        assertEquals(decodes, keyward.decodeCount(), "a refresh made a call to Google");
        String rotated = install.store.loadCredential();
        assertNotEquals(firstCredential, rotated, "the credential did not rotate");
        assertNotEquals(first.token(), install.client.session().token());
    }

    @Test
    void twentyConcurrentFirstCallsShareOneHandshake() throws Exception {
        Install install = new Install();
        long decodes = keyward.decodeCount();
        long echoes = keyward.providerRequests("/v1/echo");
        List<Integer> statuses = concurrently(20, () -> install.client.send(ECHO).status());

        assertEquals(20, statuses.size());
        assertTrue(statuses.stream().allMatch(s -> s == 200), statuses.toString());
        assertEquals(1, install.transport.count("/v1/challenge"));
        assertEquals(1, install.transport.count("/v1/attest/android"));
        assertEquals(1, install.integrity.requests.get());
        assertEquals(decodes + 1, keyward.decodeCount());
        assertEquals(echoes + 20, keyward.providerRequests("/v1/echo"));
    }

    @Test
    void sessionReachingItsEndMidUseIsRefreshedOnceForConcurrentCallers() throws Exception {
        Install install = new Install();
        KeywardSession first = install.client.session();
        assertEquals(first.expiresAt(), install.clock.millis() / 1000 + keyward.sessionTtlSeconds);

        install.advanceBothClocks(keyward.sessionTtlSeconds - MARGIN - 1);
        assertEquals(200, install.client.send(ECHO).status());
        assertEquals(0, install.transport.count("/v1/refresh"), "renewed before the margin");
        install.advanceBothClocks(1);
        // Ten calls in flight when the clock reaches the margin: one refresh between them (the
        // session it brings lasts past the margin, so a caller arriving after it also uses it).
        List<Integer> statuses = concurrently(10, () -> install.client.send(ECHO).status());
        assertTrue(statuses.stream().allMatch(s -> s == 200), statuses.toString());
        assertEquals(1, install.transport.count("/v1/refresh"));
        assertEquals(1, install.transport.count("/v1/attest/android"));
    }

    @Test
    void deviceClockHoursAheadOfKeywardsChangesNothing() throws Exception {
        Install install = new Install();
        install.clock.advanceSeconds(2 * 3600);
        KeywardSession first = install.client.session();
        // By the device's clock the session's expires_at is long past; its lifetime has not.
        assertTrue(first.expiresAt() < install.clock.millis() / 1000);
        assertEquals(200, install.client.send(ECHO).status());
        assertEquals(200, install.client.send(ECHO).status());
        assertEquals(0, install.transport.count("/v1/refresh"));
        assertEquals(1, install.transport.count("/v1/attest/android"));

        install.clock.advanceSeconds(keyward.sessionTtlSeconds - MARGIN);
        assertEquals(200, install.client.send(ECHO).status());
        assertEquals(1, install.transport.count("/v1/refresh"));
    }

    @Test
    void sessionKeywardNoLongerAcceptsIsRefreshedOnceAndTheCallSentAgain() throws Exception {
        Install install = new Install();
        assertEquals(200, install.client.send(ECHO).status());
        long echoes = keyward.providerRequests("/v1/echo");
        long decodes = keyward.decodeCount();

        // Keyward's clock passes the session's expiry and its 60 s leeway; the client's clock has
        // not moved, so it still holds the session good: Keyward's session_invalid tells it.
        keyward.advance(keyward.sessionTtlSeconds + 61);
        ProviderResponse answer = install.client.send(ECHO);

        assertEquals(200, answer.status());
        assertEquals(1, install.transport.count("/v1/refresh"));
        assertEquals(3, install.transport.count("/p/fixture/v1/echo"), "first call, the refused one, the one sent again");
        assertEquals(echoes + 1, keyward.providerRequests("/v1/echo"), "the refused call reached the provider");
        assertEquals(decodes, keyward.decodeCount());
    }

    @Test
    void providersOwn401IsReturnedAndNotRetried() throws Exception {
        Install install = new Install();
        long before = keyward.providerRequests("/v1/provider-401");

        ProviderResponse answer = install.client.send(ProviderRequest.get("fixture", "/v1/provider-401", null));

        assertEquals(401, answer.status());
        assertEquals("{\"error\":\"the provider's own refusal\"}", answer.bodyText());
        assertNull(answer.header("Keyward-Error"));
        assertEquals(1, install.transport.count("/p/fixture/v1/provider-401"));
        assertEquals(before + 1, keyward.providerRequests("/v1/provider-401"));
        assertEquals(0, install.transport.count("/v1/refresh"));
        assertEquals(1, install.transport.count("/v1/attest/android"));
    }

    @Test
    void revokedDeviceGetsTheTypedRefusal() throws Exception {
        Install install = new Install();
        assertEquals(200, install.client.send(ECHO).status());
        keyward.revoke(install.deviceId());
        long echoes = keyward.providerRequests("/v1/echo");

        KeywardException thrown = assertThrows(KeywardException.class, () -> install.client.send(ECHO));

        assertEquals(KeywardException.Kind.REFUSED, thrown.kind());
        assertEquals(KeywardErrorCode.FORBIDDEN, thrown.code());
        assertEquals(403, thrown.refusal().status());
        assertNotNull(thrown.refusal().requestId());
        // The session died with the device, its credential too (credential_invalid, forgotten),
        // and Play Integrity for the same install id is refused.
        assertEquals(1, install.transport.count("/v1/refresh"));
        assertEquals(2, install.transport.count("/v1/attest/android"));
        assertNull(install.store.loadCredential());
        assertEquals(echoes, keyward.providerRequests("/v1/echo"));
    }

    @Test
    void dailyBudgetRefusalCarriesRetryAfterToUtcMidnight() throws Exception {
        Install install = new Install();
        ProviderRequest costly = ProviderRequest.get("costly", "/v1/echo", null);
        assertTrue(2 * keyward.costlyCost > keyward.dailyCredits);
        assertEquals(200, install.client.send(costly).status());

        KeywardException thrown = assertThrows(KeywardException.class, () -> install.client.send(costly));

        long nowSeconds = keyward.nowMillis() / 1000;
        assertEquals(KeywardException.Kind.REFUSED, thrown.kind());
        assertEquals(KeywardErrorCode.INSTALL_BUDGET_EXHAUSTED, thrown.code());
        assertEquals(429, thrown.refusal().status());
        assertEquals(Integer.valueOf((int) (86_400 - nowSeconds % 86_400)), thrown.retryAfterSeconds());
        assertEquals(0, install.transport.count("/v1/refresh"), "a budget refusal renewed the session");
    }

    @Test
    void streamedEventsArriveAsTheyAreWritten() throws Exception {
        Install install = new Install();
        try (KeywardStream stream = install.client.stream(ProviderRequest.postJson("fixture", "/v1/stream", "{\"stream\":true}"))) {
            assertEquals(200, stream.status());
            assertTrue(stream.header("Content-Type").startsWith("text/event-stream"));
            long writtenBefore = keyward.streamEventsWritten();

            assertEquals(new ServerSentEvent("message", "first", null, null), stream.nextEvent());
            // The provider holds the rest until released: the first arrived before the last was written.
            assertEquals(writtenBefore, keyward.streamEventsWritten());
            assertEquals(1, keyward.releaseStreams());

            assertEquals(new ServerSentEvent("message", "second", null, null), stream.nextEvent());
            assertEquals(new ServerSentEvent("done", "[DONE]", null, null), stream.nextEvent());
            assertNull(stream.nextEvent());
        }
    }

    @Test
    void streamedEventsReachACallbackAsTheyArrive() throws Exception {
        Install install = new Install();
        List<String> events = new ArrayList<>();
        List<Long> writtenWhenSeen = new ArrayList<>();
        KeywardStream stream = install.client.stream(ProviderRequest.postJson("fixture", "/v1/stream", "{}"));
        long writtenBefore = keyward.streamEventsWritten();
        stream.forEachEvent(event -> {
            events.add(event.event() + ":" + event.data());
            try {
                writtenWhenSeen.add(keyward.streamEventsWritten());
                if (events.size() == 1) assertEquals(1, keyward.releaseStreams());
            } catch (Exception failure) {
                throw new AssertionError(failure);
            }
        });
        assertEquals(List.of("message:first", "message:second", "done:[DONE]"), events);
        assertEquals(writtenBefore, writtenWhenSeen.get(0), "the first event was seen only after later ones were written");
    }

    @Test
    void refusedCredentialLeadsToAFreshAttestation() throws Exception {
        Install install = new Install();
        install.store.saveInstallId("00000000-0000-4000-8000-" + String.format("%012x", System.nanoTime() & 0xFFFFFFFFFFFFL));
        install.store.saveCredential("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");

        assertEquals(200, install.client.send(ECHO).status());

        assertEquals(1, install.transport.count("/v1/refresh"));
        assertEquals(1, install.transport.count("/v1/attest/android"));
        assertNotEquals("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", install.store.loadCredential());
    }

    @Test
    void resetForgetsTheCredentialSoTheNextCallRunsPlayIntegrityForTheSameInstall() throws Exception {
        Install install = new Install();
        assertEquals(200, install.client.send(ECHO).status());
        String installId = install.store.loadInstallId();
        long decodes = keyward.decodeCount();

        install.client.reset();
        assertNull(install.store.loadCredential());
        assertEquals(200, install.client.send(ECHO).status());

        assertEquals(2, install.transport.count("/v1/attest/android"));
        assertEquals(0, install.transport.count("/v1/refresh"));
        assertEquals(decodes + 1, keyward.decodeCount());
        assertEquals(installId, install.store.loadInstallId());
    }

    @Test
    void providerPlayNoLongerAcceptsIsPreparedAgainOnce() throws Exception {
        Install install = new Install();
        AtomicInteger requests = new AtomicInteger();
        IntegrityTokenSource flaky = new IntegrityTokenSource() {
            @Override
            public void prepare() {
                install.integrity.prepare();
            }

            @Override
            public String request(String requestHash) throws IntegrityException {
                if (requests.incrementAndGet() == 1) throw new IntegrityException(IntegrityException.Reason.PROVIDER_INVALID, "INTEGRITY_TOKEN_PROVIDER_INVALID", null);
                return install.integrity.request(requestHash);
            }
        };
        KeywardClient client = new KeywardClient(
                KeywardConfiguration.builder(keyward.baseUrl).appKey(keyward.appKey).clock(install.clock).refreshMarginSeconds(MARGIN).build(), flaky, install.store, install.transport);

        assertEquals(200, client.send(ECHO).status());
        assertEquals(2, install.integrity.prepares.get());
        assertEquals(2, requests.get());
    }

    @Test
    void unknownAppKeyIsTheTypedRefusal() throws Exception {
        Install install = new Install("not-an-app-key-of-this-deployment");
        KeywardException thrown = assertThrows(KeywardException.class, () -> install.client.session());
        assertEquals(KeywardErrorCode.APP_KEY_INVALID, thrown.code());
        assertEquals(401, thrown.refusal().status());
        assertEquals(0, install.integrity.requests.get());
    }

    @Test
    void unsupportedDeviceIsTheTypedError() throws Exception {
        Install install = new Install();
        IntegrityTokenSource noPlay = new IntegrityTokenSource() {
            @Override
            public void prepare() throws IntegrityException {
                throw new IntegrityException(IntegrityException.Reason.UNSUPPORTED, "PLAY_STORE_NOT_FOUND", null);
            }

            @Override
            public String request(String requestHash) {
                throw new AssertionError("requested a token without a prepared provider");
            }
        };
        KeywardClient client = new KeywardClient(KeywardConfiguration.builder(keyward.baseUrl).appKey(keyward.appKey).build(), noPlay, install.store, install.transport);
        KeywardException thrown = assertThrows(KeywardException.class, () -> client.send(ECHO));
        assertEquals(KeywardException.Kind.UNSUPPORTED_DEVICE, thrown.kind());
        assertNull(thrown.refusal());
    }

    // Helpers

    private static List<HttpTransport.Request> sentTo(Install install, String path) {
        List<HttpTransport.Request> matching = new ArrayList<>();
        synchronized (install.transport.sent) {
            for (HttpTransport.Request request : install.transport.sent) if (request.target().equals(path)) matching.add(request);
        }
        return matching;
    }

    private interface Call<T> {
        T run() throws Exception;
    }

    /** Runs {@code count} calls at once (released together) and returns their results; 30 s deadline. */
    private static <T> List<T> concurrently(int count, Call<T> call) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(count);
        try {
            CountDownLatch ready = new CountDownLatch(count);
            CountDownLatch go = new CountDownLatch(1);
            List<Future<T>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                futures.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    return call.run();
                }));
            }
            assertTrue(ready.await(30, TimeUnit.SECONDS));
            go.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> future : futures) results.add(future.get(30, TimeUnit.SECONDS));
            return results;
        } finally {
            pool.shutdownNow();
        }
    }
}
