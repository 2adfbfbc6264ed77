package dev.keyward.client;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/** The test's IntegrityTokenSource: asks the fixture's fake Google for the token Play would hand out, and counts calls. */
final class FixtureIntegrity implements IntegrityTokenSource {
    private final FixtureControl keyward;
    final AtomicInteger prepares = new AtomicInteger();
    final AtomicInteger requests = new AtomicInteger();
    volatile String lastRequestHash;

    FixtureIntegrity(FixtureControl keyward) {
        this.keyward = keyward;
    }

    @Override
    public void prepare() {
        prepares.incrementAndGet();
    }

    @Override
    public String request(String requestHash) throws IntegrityException {
        requests.incrementAndGet();
        lastRequestHash = requestHash;
        try {
            return keyward.integrityToken(requestHash);
        } catch (IOException failure) {
            throw new IntegrityException(IntegrityException.Reason.FAILED, "fixture unreachable", failure);
        }
    }
}
