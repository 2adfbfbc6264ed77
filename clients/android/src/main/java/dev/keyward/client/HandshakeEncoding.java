package dev.keyward.client;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * The handshake encodings as Keyward checks them (README, "Any other client: the raw protocol"),
 * tested against {@code Tests/Fixtures/client-data-vectors.json}, which the server's and the Swift
 * SDK's tests read too.
 */
public final class HandshakeEncoding {
    private HandshakeEncoding() {}

    /**
     * The 32 challenge bytes from the text {@code /v1/challenge} returned (base64url without
     * padding; standard base64 and padding are accepted too).
     *
     * @return the bytes, or null when {@code challenge} is not base64
     */
    public static byte[] challengeBytes(String challenge) {
        if (challenge == null) return null;
        String text = challenge.replace('+', '-').replace('/', '_');
        while (text.endsWith("=")) text = text.substring(0, text.length() - 1);
        try {
            return Base64.getUrlDecoder().decode(text);
        } catch (IllegalArgumentException notBase64) {
            return null;
        }
    }

    /**
     * The Play Integrity {@code requestHash} (standard requests):
     * base64url(SHA-256(challenge bytes ‖ UTF-8 install_id)), unpadded, 43 characters.
     *
     * @return the hash, or null when {@code challenge} is not base64
     */
    public static String androidRequestHash(String challenge, String installId) {
        byte[] bytes = challengeBytes(challenge);
        if (bytes == null) return null;
        MessageDigest digest = sha256();
        digest.update(bytes);
        digest.update(installId.getBytes(StandardCharsets.UTF_8));
        return Base64.getUrlEncoder().withoutPadding().encodeToString(digest.digest());
    }

    /** Keyward's device id for an Android install: hex(SHA-256(UTF-8 package name ‖ UTF-8 install id)), lowercase. */
    public static String deviceId(String packageName, String installId) {
        MessageDigest digest = sha256();
        digest.update(packageName.getBytes(StandardCharsets.UTF_8));
        digest.update(installId.getBytes(StandardCharsets.UTF_8));
        StringBuilder hex = new StringBuilder(64);
        for (byte b : digest.digest()) hex.append(Character.forDigit((b >> 4) & 0xF, 16)).append(Character.forDigit(b & 0xF, 16));
        return hex.toString();
    }

    /** SHA-256 of the 32 challenge bytes (the iOS handshake's clientDataHash); null when not base64. */
    public static byte[] clientDataHash(String challenge) {
        byte[] bytes = challengeBytes(challenge);
        return bytes == null ? null : sha256().digest(bytes);
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException everyJvmHasIt) {
            throw new IllegalStateException(everyJvmHasIt);
        }
    }
}
