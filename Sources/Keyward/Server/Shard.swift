import HTTPServer
import Store
import Upstream

/// One event loop of the public listener, and the one home of Keyward's threading model.
///
/// A shard owns one thread. On it run, in one `epoll_wait` loop over one epoll set: the shard's
/// libcurl multi handle (its `UpstreamClient`, whose `MultiLoop` owns the thread and the set) and
/// the shard's HTTP server (an `HTTPServer` with no threads of its own, attached to that loop as an
/// `AttachedEventSource`). The server registers its listener and connections in the loop's set
/// (`UpstreamClient.sharedEventSet()`, tokens tagged with `AttachedEventSource.tokenTag`) and
/// waits on no set of its own: each wait's tagged entries go to the server, the others to libcurl. Every shard's server listens on the same port (SO_REUSEPORT) and the
/// kernel spreads connections between them, so a proxied request is read, routed, forwarded,
/// answered and streamed on one thread from its first byte to its last, without a hand-off.
///
/// Every thread the process runs (`keyward serve`), and why:
///
/// | thread | made by | count | runs |
/// |---|---|---|---|
/// | main | the process | 1 | start-up, then blocks reading the signal pipe (`KeywardServer.runUntilTerminated`): SIGHUP reloads providers, SIGTERM/SIGINT drain |
/// | `kw-shard-N` | ``Shard`` | one per core, at most 16 | the public listener and proxied transfers, as above; in-memory rate decisions (no I/O) |
/// | `kw-google` | `serve` | 1 | the Android handshake's calls to Google (OAuth token, `decodeIntegrityToken`) |
/// | `kw-android-N` | ``BlockingExecutor`` | 0–8, on demand | standard-mode Android handshakes, which wait on Google; up to 256 more queue, then 503 |
/// | `kw-devcheck-N` | ``BlockingExecutor`` | 0–8, on demand, only with `[apple.devicecheck]` | iOS attestations (they ask Apple's DeviceCheck) and the bit-0 updates after an exhausted allowance |
/// | `kw-store-N` | `AsyncStore` | `[store] pool_size` (4) | every store call a request needs (device reads, challenges, iOS handshakes, assertions, readiness); up to 1,024 more queue, then 503 (credit give-backs wait however long it takes) |
/// | `kw-store-watch` | `AsyncStore` | 1 | answers store operations not done within `[store] operation_timeout_ms` with 503 |
/// | `kw-admissions`, `kw-checkpoint` | `AsyncStore` (SQLite) | 1 each | group commit of rate admissions (a request goes upstream once its admission committed); passive WAL checkpoints |
/// | libcurl resolver | libcurl (its threaded resolver, as Debian builds it) | one per DNS lookup, short-lived | `getaddrinfo` for an upstream host not in libcurl's DNS cache, so a slow DNS never blocks a loop |
/// | `kw-http-N` | the admin `HTTPServer` | one per core | `/metrics`, `/healthz`, `/readyz` on the admin listener |
/// | Dispatch workers | `DispatchSourceTimer`s, `RepeatingTimer` | as Dispatch sees fit | the purge timer (every 60 s: `Lifecycle.purgeExpired`), the log flush (every 100 ms: `BufferedLogSink`), with `[apple.risk]` the receipt refresh (`ReceiptRefreshTask`, blocking store and Apple calls with deadlines) |
///
/// Rules: nothing that waits runs on a shard thread; store calls go to the store executor
/// (`AsyncStore`), other work that blocks to the ``BlockingExecutor``.
/// Another thread that has something for a shard (a late answer, stream bytes) wakes its loop
/// through the server's `ExternalLoop.wake`, never by touching the loop's state.
final class Shard: Sendable {
    /// The loop's libcurl side; its thread is the shard's thread.
    let upstream: UpstreamClient
    /// The loop's HTTP server side.
    let server: HTTPServer

    /// A shard serving `service` on `listener` (its share of the connection limit already taken),
    /// forwarding through a client configured as `upstreamConfiguration`. Nothing is bound yet.
    /// - Parameter index: the shard's number from 0, in its thread's name (`kw-shard-N`).
    init(index: Int, service: KeywardService, listener: HTTPServerConfiguration, upstreamConfiguration: UpstreamClient.Configuration) {
        let client = UpstreamClient(configuration: upstreamConfiguration, threadName: "kw-shard-\(index)")
        upstream = client
        server = HTTPServer(
            configuration: listener,
            bodyLimit: { head in service.bodyLimit(for: head) },
            onRefusal: { refusal in service.logRefusal(refusal) },
            externalLoop: HTTPServer.ExternalLoop(
                wake: { client.wakeAttachedSource() },
                sharedEventSet: HTTPServer.ExternalLoop.SharedEventSet(
                    descriptor: client.sharedEventSet(), tokenTag: AttachedEventSource.tokenTag)),
            handler: { head, body, writer in service.handle(head, body: body, writer: writer, upstream: client) })
    }

    /// Binds the shard's server (to `first`'s port when given, else to the configured one) and
    /// hands it to the loop thread.
    /// - Throws: `HTTPServerError` when the port cannot be bound.
    func start(sharingPortWith first: Shard?) throws {
        if let first { try server.start(sharingPortWith: first.server) } else { try server.start() }
        let server = self.server
        upstream.attach(AttachedEventSource(
            run: { ready in AdmissionWakeUps.deferred { server.runOnce(ready: ready.tokens, events: ready.events) } },
            millisecondsUntilRun: { server.millisecondsUntilRun }))
    }

    /// Stops the loop first (its transfers complete as cancelled), then the server, so no loop
    /// still runs a server that is being stopped. The server's last pass registers and waits in
    /// the set after the loop closed its descriptor: the server's own duplicate keeps the set.
    func stop() {
        upstream.shutdown()
        server.stop()
    }
}
