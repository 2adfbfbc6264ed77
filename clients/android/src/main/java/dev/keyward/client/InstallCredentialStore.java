package dev.keyward.client;

import java.io.IOException;

/**
 * Where the install id and the current install credential live between launches: the app passes
 * an adapter over EncryptedSharedPreferences (README, "Android"), tests an in-memory store.
 *
 * <p>The install id is a lowercase UUID made once per install; Keyward's device id is
 * hex(SHA-256(package name ‖ install id)). The install credential is exchanged at
 * {@code /v1/refresh} for a session and its successor: each one works once, so the client saves
 * the successor before it uses the session. Both are secrets of this install: keep them out of
 * backups. Calls come from the client's threads, one handshake at a time.
 */
public interface InstallCredentialStore {
    /** The stored install id, or null on a first run. @throws IOException when the store cannot be read */
    String loadInstallId() throws IOException;

    /** Stores the install id (made once). @throws IOException when it cannot be written */
    void saveInstallId(String installId) throws IOException;

    /** The current install credential (base64url), or null when none is stored. @throws IOException when the store cannot be read */
    String loadCredential() throws IOException;

    /** Replaces the install credential. @throws IOException when it cannot be written */
    void saveCredential(String credential) throws IOException;

    /** Forgets the install credential (Keyward refused it: the next session needs Play Integrity). @throws IOException when it cannot be written */
    void deleteCredential() throws IOException;
}
