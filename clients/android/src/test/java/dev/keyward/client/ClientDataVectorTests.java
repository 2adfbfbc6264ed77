package dev.keyward.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The worked examples of Tests/Fixtures/client-data-vectors.json, which the server's tests and the
 * Swift SDK's tests read too, so the three cannot drift. The file's path comes from the system
 * property {@code keyward.vectors} (clients/android/test.sh sets it).
 */
final class ClientDataVectorTests {
    private static Map<String, Object> vectors;

    @BeforeAll
    static void read() throws Exception {
        String path = System.getProperty("keyward.vectors");
        vectors = Json.parseObject(new String(Files.readAllBytes(Path.of(path)), StandardCharsets.UTF_8));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> section(String name) {
        return (Map<String, Object>) vectors.get(name);
    }

    @Test
    void androidRequestHashIsBase64UrlOfSha256OfChallengeBytesAndInstallId() {
        Map<String, Object> android = section("android");
        String hash = HandshakeEncoding.androidRequestHash((String) android.get("challenge"), (String) android.get("install_id"));
        assertEquals(android.get("request_hash"), hash);
        assertEquals(43, hash.length());
    }

    @Test
    void androidDeviceIdIsHexOfSha256OfPackageAndInstallId() {
        Map<String, Object> android = section("android");
        assertEquals(android.get("device_id"), HandshakeEncoding.deviceId((String) android.get("package_name"), (String) android.get("install_id")));
    }

    @Test
    void challengeDecodesToItsBytesAndHashesTheBytesNotTheText() {
        Map<String, Object> handshake = section("handshake");
        String challenge = (String) handshake.get("challenge");
        assertEquals(handshake.get("challenge_bytes_hex"), hex(HandshakeEncoding.challengeBytes(challenge)));
        assertEquals(handshake.get("client_data_hash_hex"), hex(HandshakeEncoding.clientDataHash(challenge)));
        assertNotEquals(handshake.get("wrong_hash_of_the_challenge_string_hex"), hex(HandshakeEncoding.clientDataHash(challenge)));
        // Standard base64 with padding names the same bytes.
        String standard = java.util.Base64.getEncoder().encodeToString(HandshakeEncoding.challengeBytes(challenge));
        assertArrayEquals(HandshakeEncoding.challengeBytes(challenge), HandshakeEncoding.challengeBytes(standard));
        assertNull(HandshakeEncoding.androidRequestHash("not base64 !", "x"));
    }

    private static String hex(byte[] bytes) {
        StringBuilder out = new StringBuilder();
        for (byte b : bytes) out.append(String.format("%02x", b & 0xFF));
        return out.toString();
    }
}
