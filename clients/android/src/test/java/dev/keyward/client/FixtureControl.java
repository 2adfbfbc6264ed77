package dev.keyward.client;

import java.io.IOException;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** The control listener of {@code keyward-demo android-fixture}: the fakes' counters and levers. */
class FixtureControl {
    final String controlUrl;

    FixtureControl(String controlUrl) {
        this.controlUrl = controlUrl;
    }

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
