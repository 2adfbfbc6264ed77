package dev.keyward.client;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The cached session and the one handshake in flight: every caller that finds no usable session
 * while a handshake runs waits for that handshake instead of starting its own (single flight), so
 * 20 concurrent first calls cost one challenge and one Play Integrity token.
 */
final class SessionCache {
    /** One handshake: a refresh or an attestation. */
    interface Handshake {
        KeywardSession run() throws KeywardException;
    }

    private KeywardSession session;
    private CompletableFuture<KeywardSession> inFlight;

    /**
     * The cached session when it is valid for more than {@code marginSeconds} after {@code now}
     * (unix seconds on the device's clock, which {@link KeywardSession#localExpiresAt()} is on), else the result of the running handshake, else of a new one run on this thread.
     *
     * @throws KeywardException what the handshake threw (every waiter gets the same exception)
     */
    KeywardSession valid(long now, long marginSeconds, Handshake handshake) throws KeywardException {
        CompletableFuture<KeywardSession> flight;
        boolean leader = false;
        synchronized (this) {
            if (session != null && now < session.localExpiresAt() - marginSeconds) return session;
            if (inFlight == null) {
                inFlight = new CompletableFuture<>();
                leader = true;
            }
            flight = inFlight;
        }
        if (leader) return lead(flight, handshake);
        try {
            return flight.get();
        } catch (ExecutionException failed) {
            Throwable cause = failed.getCause();
            if (cause instanceof KeywardException) throw (KeywardException) cause;
            if (cause instanceof RuntimeException) throw (RuntimeException) cause;
            if (cause instanceof Error) throw (Error) cause;
            throw KeywardException.of(KeywardException.Kind.TRANSPORT, "handshake failed", cause);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw KeywardException.of(KeywardException.Kind.TRANSPORT, "interrupted while waiting for the handshake", interrupted);
        }
    }

    private KeywardSession lead(CompletableFuture<KeywardSession> flight, Handshake handshake) throws KeywardException {
        KeywardSession fresh;
        try {
            fresh = handshake.run();
        } catch (KeywardException | RuntimeException | Error failure) {
            synchronized (this) {
                if (inFlight == flight) inFlight = null;
            }
            flight.completeExceptionally(failure);
            throw failure;
        }
        synchronized (this) {
            if (inFlight == flight) {
                session = fresh;
                inFlight = null;
            }
        }
        flight.complete(fresh);
        return fresh;
    }

    /** Drops the cached session if it is still {@code token} (Keyward refused it); a newer one stays. */
    synchronized void invalidate(String token) {
        if (session != null && session.token().equals(token)) session = null;
    }

    /** Drops the cached session, whatever it is. */
    synchronized void clear() {
        session = null;
    }
}
