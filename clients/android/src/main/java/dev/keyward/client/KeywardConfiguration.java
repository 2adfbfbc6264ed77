package dev.keyward.client;

import java.time.Clock;
import java.util.Objects;

/** Where Keyward is and how the client behaves. Immutable; build with {@link #builder}. */
public final class KeywardConfiguration {
    private final String baseUrl;
    private final String packageName;
    private final String appKey;
    private final long refreshMarginSeconds;
    private final Clock clock;

    private KeywardConfiguration(Builder builder) {
        String base = builder.baseUrl;
        while (base.endsWith("/")) base = base.substring(0, base.length() - 1);
        baseUrl = base;
        packageName = builder.packageName;
        appKey = builder.appKey;
        refreshMarginSeconds = builder.refreshMarginSeconds;
        clock = builder.clock;
    }

    /** @param baseUrl Keyward's public origin, e.g. {@code https://keyward.example.com} (a path prefix is kept) */
    public static Builder builder(String baseUrl) {
        return new Builder(baseUrl);
    }

    /** The origin, without a trailing slash. */
    public String baseUrl() {
        return baseUrl;
    }

    /** The app's package name sent as {@code package_name}, or null (the server then uses its only one). */
    public String packageName() {
        return packageName;
    }

    /** The publishable app key sent as {@code X-Keyward-App-Key} on the handshake routes, or null. */
    public String appKey() {
        return appKey;
    }

    /** A session is renewed when fewer than this many seconds remain. */
    public long refreshMarginSeconds() {
        return refreshMarginSeconds;
    }

    /** The device's clock: decides whether the cached session is still good. */
    public Clock clock() {
        return clock;
    }

    /** Builds a {@link KeywardConfiguration}. */
    public static final class Builder {
        private final String baseUrl;
        private String packageName;
        private String appKey;
        private long refreshMarginSeconds = 60;
        private Clock clock = Clock.systemUTC();

        private Builder(String baseUrl) {
            this.baseUrl = Objects.requireNonNull(baseUrl);
        }

        /** The app's package name ({@code Context.getPackageName()}): needed when the deployment serves several. */
        public Builder packageName(String packageName) {
            this.packageName = packageName;
            return this;
        }

        /** The build's publishable app key, for deployments with {@code [handshake] require_app_key}. */
        public Builder appKey(String appKey) {
            this.appKey = appKey;
            return this;
        }

        /** Seconds before expiry at which the session is renewed (default 60; at least 0). */
        public Builder refreshMarginSeconds(long seconds) {
            if (seconds < 0) throw new IllegalArgumentException("refreshMarginSeconds must be at least 0");
            this.refreshMarginSeconds = seconds;
            return this;
        }

        /** The clock (tests pin it); the system's UTC clock by default. */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock);
            return this;
        }

        /** The configuration. */
        public KeywardConfiguration build() {
            return new KeywardConfiguration(this);
        }
    }
}
