package dev.keyward.client;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/** A clock that moves only when the test moves it. */
final class TestClock extends Clock {
    private final AtomicLong millis;

    TestClock(long millis) {
        this.millis = new AtomicLong(millis);
    }

    void advanceSeconds(long seconds) {
        millis.addAndGet(seconds * 1000);
    }

    @Override
    public long millis() {
        return millis.get();
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
