package dev.keyward.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The library against the production binary: {@code keyward serve} started from a
 * {@code keyward.toml} as an operator writes it, against the fake Google (standard mode) and the
 * fake provider of {@code keyward-demo android-fixture --fakes-only}; a device revoked with
 * {@code keyward devices revoke} on the same store. Keyward keeps the system clock here, so the
 * tests that move Keyward's clock are in {@link ClientAgainstKeywardTests}.
 */
final class ClientAgainstKeywardServeTests {
    private static KeywardServe keyward;
    private static final ProviderRequest ECHO = ProviderRequest.get("fixture", "/v1/echo", null);

    @BeforeAll
    static void start() throws Exception {
        keyward = new KeywardServe();
    }

    @AfterAll
    static void stop() throws Exception {
        if (keyward != null) keyward.stop();
    }

    private static final class Install {
        final InMemoryInstallCredentialStore store = new InMemoryInstallCredentialStore();
        final FixtureIntegrity integrity = new FixtureIntegrity(keyward.control);
        final CountingTransport transport = new CountingTransport();
        final TestClock clock = new TestClock(System.currentTimeMillis());
        final KeywardClient client = new KeywardClient(
                KeywardConfiguration.builder(keyward.baseUrl).appKey(keyward.appKey).clock(clock).build(), integrity, store, transport);
    }

    @Test
    void attestCallRefreshWithoutADecodeAndThe401OfTheProvider() throws Exception {
        Install install = new Install();
        long decodes = keyward.control.decodeCount();

        ProviderResponse echo = install.client.send(ProviderRequest.get("fixture", "/v1/echo", "x=1"));
        assertEquals(200, echo.status());
        assertEquals("{\"method\":\"GET\",\"target\":\"/v1/echo?x=1\"}", echo.bodyText());
        assertEquals(decodes + 1, keyward.control.decodeCount());
        KeywardSession first = install.client.session();
        String firstCredential = install.store.loadCredential();

        // The device's clock reaches the refresh margin: /v1/refresh, no call to Google.
        install.clock.advanceSeconds(first.expiresAt() - install.clock.millis() / 1000 - 60);
        assertEquals(200, install.client.send(ECHO).status());
        assertEquals(1, install.transport.count("/v1/refresh"));
        assertEquals(decodes + 1, keyward.control.decodeCount());
        assertNotEquals(firstCredential, install.store.loadCredential());

        long before = keyward.control.providerRequests("/v1/provider-401");
        ProviderResponse refused = install.client.send(ProviderRequest.get("fixture", "/v1/provider-401", null));
        assertEquals(401, refused.status());
        assertNull(refused.header("Keyward-Error"));
        assertEquals(before + 1, keyward.control.providerRequests("/v1/provider-401"));
        assertEquals(1, install.transport.count("/v1/refresh"));
    }

    @Test
    void twentyConcurrentFirstCallsShareOneHandshake() throws Exception {
        Install install = new Install();
        long decodes = keyward.control.decodeCount();
        ExecutorService pool = Executors.newFixedThreadPool(20);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Integer>> calls = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                calls.add(pool.submit(() -> {
                    go.await();
                    return install.client.send(ECHO).status();
                }));
            }
            go.countDown();
            for (Future<Integer> call : calls) assertEquals(200, call.get(30, TimeUnit.SECONDS));
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, install.transport.count("/v1/challenge"));
        assertEquals(1, install.transport.count("/v1/attest/android"));
        assertEquals(decodes + 1, keyward.control.decodeCount());
    }

    @Test
    void streamedEventsArriveAsTheyAreWritten() throws Exception {
        Install install = new Install();
        try (KeywardStream stream = install.client.stream(ProviderRequest.postJson("fixture", "/v1/stream", "{}"))) {
            long written = keyward.control.streamEventsWritten();
            java.util.Iterator<ServerSentEvent> events = stream.events();
            assertEquals("first", events.next().data());
            assertEquals(written, keyward.control.streamEventsWritten(), "later events were written before the first arrived");
            assertEquals(1, keyward.control.releaseStreams());
            assertEquals("second", events.next().data());
            assertEquals("[DONE]", events.next().data());
            assertFalse(events.hasNext());
        }
    }

    @Test
    void budgetRefusalCarriesRetryAfterToUtcMidnight() throws Exception {
        Install install = new Install();
        ProviderRequest costly = ProviderRequest.get("costly", "/v1/echo", null);
        assertEquals(200, install.client.send(costly).status());
        long before = System.currentTimeMillis() / 1000;
        KeywardException thrown = assertThrows(KeywardException.class, () -> install.client.send(costly));
        long after = System.currentTimeMillis() / 1000;
        assertEquals(KeywardErrorCode.INSTALL_BUDGET_EXHAUSTED, thrown.code());
        assertEquals(429, thrown.refusal().status());
        // Keyward read its clock (the system's, as this test's) during the call: from that second,
        // Retry-After lands exactly on a UTC midnight.
        int retryAfter = thrown.retryAfterSeconds();
        boolean landsOnMidnight = false;
        for (long second = before; second <= after; second++) landsOnMidnight |= (second + retryAfter) % 86_400 == 0;
        assertTrue(landsOnMidnight, "Retry-After " + retryAfter + " from " + before + ".." + after);
        assertTrue(retryAfter > 0 && retryAfter <= 86_400);
    }

    @Test
    void deviceRevokedWithTheCliGetsTheTypedRefusalAtItsNextHandshake() throws Exception {
        Install install = new Install();
        assertEquals(200, install.client.send(ECHO).status());
        String device = HandshakeEncoding.deviceId(keyward.packageName, install.store.loadInstallId());
        keyward.run("devices", "revoke", "--config", keyward.directory.resolve("keyward.toml").toString(), "--id", device);

        // The next session: the credential is refused (revoked with the device), then Play Integrity
        // for the same install is refused too.
        install.clock.advanceSeconds(install.client.session().expiresAt() - install.clock.millis() / 1000);
        KeywardException thrown = assertThrows(KeywardException.class, () -> install.client.send(ECHO));
        assertEquals(KeywardErrorCode.FORBIDDEN, thrown.code());
        assertEquals(403, thrown.refusal().status());
        assertEquals(1, install.transport.count("/v1/refresh"));
        assertEquals(2, install.transport.count("/v1/attest/android"));
        assertNull(install.store.loadCredential());
    }
}
