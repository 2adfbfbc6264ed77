package dev.keyward.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real Keyward on loopback for the tests: {@code keyward-demo android-fixture} (Keyward with its
 * SQLite store, a fake Google in standard mode and a fake provider; see its doc comment in
 * Sources/KeywardDemo/AndroidClientFixture.swift), started once per test run and stopped when the
 * JVM exits (it also stops by itself when its stdin closes, so it never outlives the tests).
 *
 * <p>The binary comes from the system property {@code keyward.demo} (clients/android/test.sh sets it).
 */
final class LiveKeyward extends FixtureControl {
    private static LiveKeyward shared;

    final Process process;
    final String baseUrl;
    final String appKey;
    final String packageName;
    final long sessionTtlSeconds;
    final long costlyCost;
    final long dailyCredits;

    /** The one fixture of this test run, started on first use. */
    static synchronized LiveKeyward shared() throws IOException {
        if (shared == null) {
            shared = start();
            LiveKeyward started = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(started::stop));
        }
        return shared;
    }

    private LiveKeyward(Process process, Map<String, Object> config) {
        super((String) config.get("control_url"));
        this.process = process;
        baseUrl = (String) config.get("base_url");
        appKey = (String) config.get("app_key");
        packageName = (String) config.get("package_name");
        sessionTtlSeconds = (Long) config.get("session_ttl_seconds");
        costlyCost = (Long) config.get("costly_cost");
        dailyCredits = (Long) config.get("install_daily_credits");
    }

    private static LiveKeyward start() throws IOException {
        Process process = startFixture();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        // The fixture's first line is its configuration; readLine returns null if it exits instead.
        String line = out.readLine();
        Map<String, Object> config = line == null ? null : Json.parseObject(line);
        if (config == null) {
            process.destroy();
            throw new IOException("keyward-demo android-fixture exited or printed no JSON before announcing itself");
        }
        return new LiveKeyward(process, config);
    }

    private static Process startFixture() throws IOException {
        String binary = System.getProperty("keyward.demo");
        if (binary == null || binary.isEmpty()) throw new IllegalStateException("set -Dkeyward.demo=<path to keyward-demo> (clients/android/test.sh does)");
        return new ProcessBuilder(binary, "android-fixture").redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    /** Closes the fixture's stdin (it shuts down and removes its folder) and waits for it, 10 s at most. */
    void stop() {
        try {
            process.getOutputStream().close();
            if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroy();
        } catch (IOException | InterruptedException ignored) {
            process.destroy();
        }
    }
}
