package dev.keyward.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
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
final class LiveKeyward {
    private static LiveKeyward shared;

    final Process process;
    final String baseUrl;
    final String controlUrl;
    final String appKey;
    final String packageName;
    final long sessionTtlSeconds;
    final long costlyCost;
    final long dailyCredits;

    /** The one fixture of this test run, started on first use. */
    static synchronized LiveKeyward shared() throws IOException {
        if (shared == null) {
            shared = new LiveKeyward();
            LiveKeyward started = shared;
            Runtime.getRuntime().addShutdownHook(new Thread(started::stop));
        }
        return shared;
    }

    private LiveKeyward() throws IOException {
        String binary = System.getProperty("keyward.demo");
        if (binary == null || binary.isEmpty()) throw new IllegalStateException("set -Dkeyward.demo=<path to keyward-demo> (clients/android/test.sh does)");
        process = new ProcessBuilder(binary, "android-fixture").redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        // The fixture's first line is its configuration; readLine returns null if it exits instead.
        String line = out.readLine();
        if (line == null) throw new IOException("keyward-demo android-fixture exited before announcing itself");
        Map<String, Object> config = Json.parseObject(line);
        if (config == null) throw new IOException("keyward-demo android-fixture printed no JSON");
        baseUrl = (String) config.get("base_url");
        controlUrl = (String) config.get("control_url");
        appKey = (String) config.get("app_key");
        packageName = (String) config.get("package_name");
        sessionTtlSeconds = (Long) config.get("session_ttl_seconds");
        costlyCost = (Long) config.get("costly_cost");
        dailyCredits = (Long) config.get("install_daily_credits");
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

    // Control routes

    /** {@code {"decode_count", "now_millis", "provider_requests", "stream_events_written"}}. */
    Map<String, Object> state() throws IOException {
        return control("GET", "/state", null);
    }

    long decodeCount() throws IOException {
        return (Long) state().get("decode_count");
    }

    long nowMillis() throws IOException {
        return (Long) state().get("now_millis");
    }

    long streamEventsWritten() throws IOException {
        return (Long) state().get("stream_events_written");
    }

    /** Requests the provider received on {@code path}. */
    long providerRequests(String path) throws IOException {
        @SuppressWarnings("unchecked")
        Map<String, Object> counts = (Map<String, Object>) state().get("provider_requests");
        Object count = counts.get(path);
        return count == null ? 0 : (Long) count;
    }

    /** Moves Keyward's (and the fake Google's) clock forward. */
    void advance(long seconds) throws IOException {
        control("POST", "/advance", "{\"seconds\":" + seconds + "}");
    }

    /** Revokes a device in Keyward's store, as {@code keyward devices revoke} does. */
    void revoke(String deviceId) throws IOException {
        Map<String, Object> answer = control("POST", "/revoke", Json.writeObject(Map.of("device_id", deviceId)));
        if (!Boolean.TRUE.equals(answer.get("revoked"))) throw new IOException("device not found: " + deviceId);
    }

    /** Lets held event streams write their remaining events. @return how many streams were released */
    long releaseStreams() throws IOException {
        return (Long) control("POST", "/release-stream", "{}").get("released");
    }

    /** The token Play would give the app for {@code requestHash}. */
    String integrityToken(String requestHash) throws IOException {
        return (String) control("POST", "/integrity-token", Json.writeObject(Map.of("request_hash", requestHash))).get("token");
    }

    private Map<String, Object> control(String method, String path, String body) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) new URL(controlUrl + path).openConnection();
        connection.setRequestMethod(method);
        connection.setConnectTimeout(10_000);
        connection.setReadTimeout(10_000);
        if (body != null) {
            connection.setDoOutput(true);
            connection.setRequestProperty("Content-Type", "application/json");
            try (OutputStream out = connection.getOutputStream()) {
                out.write(body.getBytes(StandardCharsets.UTF_8));
            }
        }
        int status = connection.getResponseCode();
        byte[] bytes = KeywardClient.readAll(status >= 400 ? connection.getErrorStream() : connection.getInputStream(), 1 << 20);
        String text = new String(bytes, StandardCharsets.UTF_8);
        if (status != 200) throw new IOException("control " + path + " answered " + status + ": " + text);
        return Json.parseObject(text);
    }
}
