package dev.keyward.client;

/** An {@link InstallCredentialStore} that forgets everything with the process: for tests and previews. */
public final class InMemoryInstallCredentialStore implements InstallCredentialStore {
    private String installId;
    private String credential;

    @Override
    public synchronized String loadInstallId() {
        return installId;
    }

    @Override
    public synchronized void saveInstallId(String installId) {
        this.installId = installId;
    }

    @Override
    public synchronized String loadCredential() {
        return credential;
    }

    @Override
    public synchronized void saveCredential(String credential) {
        this.credential = credential;
    }

    @Override
    public synchronized void deleteCredential() {
        credential = null;
    }
}
