import CShims
import Foundation
import HTTPServer
import Upstream

/// The running process: the public listener's shards, the admin listener, the purge timer and
/// signal handling. ``Shard`` lists every thread the process runs.
///
/// SIGHUP reloads `providers.toml` and the provider secrets through `reloadProviders`; a registry
/// that fails validation is logged with its errors and the one in force stays. SIGTERM and SIGINT
/// stop both listeners.
public final class KeywardServer: Sendable {
    /// The application both listeners serve.
    public let service: KeywardService
    /// The public listener: N event loops on one port.
    let shards: [Shard]
    let adminServer: HTTPServer?
    let reloadProviders: (@Sendable () throws -> ProviderTable.Snapshot)?
    /// Every minute: expired challenges, rate events and budgets leave the store.
    let purgeTimer: RepeatingTimer

    /// - Parameters:
    ///   - publicListener: where apps connect (handshake and proxy routes). Its `threads` is
    ///     ignored: the shards are the threads.
    ///   - adminListener: `/metrics`, `/healthz`, `/readyz`; nil for none.
    ///   - reloadProviders: loads and validates the provider registry again (SIGHUP); nil: no reload.
    ///   - shards: event loops of the public listener (at least 1; `serve` runs one per core).
    ///   - shardUpstream: the shards' upstream client settings (pool sizes, CA bundle, egress proxy).
    /// Nothing is bound until `start()`.
    public init(
        service: KeywardService,
        publicListener: HTTPServerConfiguration,
        adminListener: HTTPServerConfiguration?,
        reloadProviders: (@Sendable () throws -> ProviderTable.Snapshot)? = nil,
        shards: Int = 1,
        shardUpstream: UpstreamClient.Configuration = UpstreamClient.Configuration()
    ) {
        self.service = service
        self.reloadProviders = reloadProviders
        let count = max(1, shards)
        // As libmicrohttpd does over its own workers: each shard bounds its share of the
        // connections. (Keyward sets no per-IP limit, which a shard would count alone.)
        var shardListener = publicListener
        shardListener.connectionLimit = max(1, (publicListener.connectionLimit + count - 1) / count)
        self.shards = (0..<count).map { _ in
            Shard(service: service, listener: shardListener, upstreamConfiguration: shardUpstream)
        }
        purgeTimer = RepeatingTimer(label: "keyward.purge", seconds: 60) { service.purgeExpired() }
        if let adminListener {
            let admin = AdminRoutes(service: service)
            adminServer = HTTPServer(
                configuration: adminListener,
                bodyLimit: { _ in 0 },
                handler: { head, body, writer in admin.handle(head, body: body, writer: writer) })
        } else {
            adminServer = nil
        }
    }

    /// Starts both listeners and the purge timer (every 60 s).
    /// - Throws: `HTTPServerError` when a port cannot be bound (if it is the admin one, the public
    ///   listener is stopped again).
    public func start() throws {
        try startPublic()
        do { try adminServer?.start() } catch {
            stopPublic()
            throw error
        }
        purgeTimer.start()
    }

    /// Binds the public listener: the first shard to the configured port, the others to the port
    /// it got.
    private func startPublic() throws {
        do {
            for (index, shard) in shards.enumerated() {
                try shard.start(sharingPortWith: index == 0 ? nil : shards[0])
            }
        } catch {
            stopPublic()
            throw error
        }
    }

    /// Stops every shard.
    private func stopPublic() {
        shards.forEach { $0.stop() }
    }

    /// The public listener's bound port (useful when configured as 0).
    public var port: UInt16 { shards.first?.server.port ?? 0 }
    /// The admin listener's bound port, if any.
    public var adminPort: UInt16? { adminServer?.port }

    /// Stops both listeners at once, cutting open streams.
    public func stop() {
        purgeTimer.stop()
        adminServer?.stop()
        stopPublic()
    }

    /// Graceful stop: no new connections; requests in progress (streams included) get up to
    /// `gracePeriodMilliseconds` to finish before the rest are cut.
    public func drain(gracePeriodMilliseconds: Int) {
        service.beginDraining()
        purgeTimer.stop()
        // Every shard stops accepting first, then all share one deadline.
        let deadline = DispatchTime.now() + .milliseconds(max(0, gracePeriodMilliseconds))
        shards.forEach { $0.server.quiesce() }
        for shard in shards where !shard.server.waitUntilIdle(deadline: deadline) { break }
        service.beginCutting()
        stopPublic()
        adminServer?.stop()
    }

    /// Reloads the provider registry now (what SIGHUP does). Returns whether the new one took effect.
    @discardableResult
    public func reload() -> Bool {
        guard let reloadProviders else { return false }
        do {
            let next = try reloadProviders()
            service.providers.replace(with: next)
            let count = next.registry.providers.count
            service.logger.info("providers_reloaded", "\(count) provider\(count == 1 ? "" : "s") in force")
            return true
        } catch {
            service.logger.info("providers_reload_refused", "kept the registry in force: \(error)")
            return false
        }
    }

    /// Blocks until SIGTERM or SIGINT, reloading on SIGHUP meanwhile; then drains the listeners.
    /// The signals are caught into a pipe read here (`kw_signal_pipe`), so one that arrives while
    /// this starts is never lost. Call once per process.
    public func runUntilTerminated() {
        let signalPipe = [SIGHUP, SIGTERM, SIGINT].withUnsafeBufferPointer { kw_signal_pipe($0.baseAddress, Int32($0.count)) }
        precondition(signalPipe >= 0, "cannot install the signal handlers")
        while true {
            var received: UInt8 = 0
            let count = read(signalPipe, &received, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { break }  // cannot happen: the write end stays open
            if Int32(received) == SIGHUP {
                _ = reload()
            } else {
                break
            }
        }
        service.logger.info("stopping", "signal received: draining for up to 10 s")
        drain(gracePeriodMilliseconds: 10_000)
    }
}
