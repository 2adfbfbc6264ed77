import CShims
import Foundation
import HTTPServer
import Sessions
import Upstream

/// The running process: the public listener's shards, the admin listener, the purge timer and
/// signal handling. ``Shard`` lists every thread the process runs.
///
/// SIGHUP reloads `providers.toml` and the provider secrets through `reloadProviders`, and the
/// session keys through `reloadSessionKeys`; a part that fails validation is logged with its errors
/// and the one in force stays (see `reload()`). SIGTERM and SIGINT stop both listeners in two
/// phases (`runUntilTerminated(timing:)`).
public final class KeywardServer: Sendable {
    /// The application both listeners serve.
    public let service: KeywardService
    /// The public listener: N event loops on one port.
    let shards: [Shard]
    let adminServer: HTTPServer?
    let reloadProviders: (@Sendable () throws -> ProviderTable.Snapshot)?
    let reloadSessionKeys: (@Sendable () throws -> SessionKeySet)?
    let settingsNeedingRestart: (@Sendable () throws -> [String])?
    /// Every minute: expired challenges, rate events and budgets leave the store.
    let purgeTimer: RepeatingTimer
    /// Flushes metered calls' waiting give-backs (``GiveBackLedger``) on the store executor.
    let giveBackTimer: RepeatingTimer
    /// `[apple.risk]`: the receipt refresh, every `refresh_every_seconds` on its own queue.
    let receiptTimer: RepeatingTimer?

    /// - Parameters:
    ///   - publicListener: where apps connect (handshake and proxy routes). Its `threads` is
    ///     ignored: the shards are the threads.
    ///   - adminListener: `/metrics`, `/healthz`, `/readyz`; nil for none.
    ///   - reloadProviders: loads and validates the provider registry again (SIGHUP); nil: no reload.
    ///   - reloadSessionKeys: reads the session signing key and verify-only keys again (SIGHUP); nil: no reload.
    ///   - settingsNeedingRestart: reads keyward.toml again and names the settings that changed
    ///     (they take a restart); throws when the file no longer validates. Nil: not checked.
    ///   - shards: event loops of the public listener (at least 1; `serve` runs one per core).
    ///   - shardUpstream: the shards' upstream client settings (pool sizes, CA bundle, egress proxy).
    /// Nothing is bound until `start()`.
    public init(
        service: KeywardService,
        publicListener: HTTPServerConfiguration,
        adminListener: HTTPServerConfiguration?,
        reloadProviders: (@Sendable () throws -> ProviderTable.Snapshot)? = nil,
        reloadSessionKeys: (@Sendable () throws -> SessionKeySet)? = nil,
        settingsNeedingRestart: (@Sendable () throws -> [String])? = nil,
        shards: Int = 1,
        shardUpstream: UpstreamClient.Configuration = UpstreamClient.Configuration()
    ) {
        self.service = service
        self.reloadProviders = reloadProviders
        self.reloadSessionKeys = reloadSessionKeys
        self.settingsNeedingRestart = settingsNeedingRestart
        let count = max(1, shards)
        // As the server does over its own loops: each shard bounds its share of the
        // connections. (Keyward sets no per-IP limit, which a shard would count alone.)
        var shardListener = publicListener
        shardListener.connectionLimit = max(1, (publicListener.connectionLimit + count - 1) / count)
        self.shards = (0..<count).map { index in
            Shard(index: index, service: service, listener: shardListener, upstreamConfiguration: shardUpstream)
        }
        let servers = self.shards.map(\.server)
        service.metrics.reportConnections {
            Metrics.ConnectionFigures(open: servers.reduce(0) { $0 + $1.openConnections },
                                      limitReached: servers.reduce(0) { $0 + $1.connectionLimitReachedCount })
        }
        purgeTimer = RepeatingTimer(label: "keyward.purge", seconds: 60) { service.purgeExpired() }
        giveBackTimer = RepeatingTimer(label: "keyward.give-backs", milliseconds: GiveBackLedger.flushIntervalMillis) {
            service.flushGiveBacksSoon()
        }
        receiptTimer = service.receiptRefresh.map { task in
            RepeatingTimer(label: "keyward.receipts", seconds: task.everySeconds) { task.runOnce() }
        }
        if let adminListener {
            let admin = AdminRoutes(service: service)
            adminServer = HTTPServer(
                configuration: adminListener,
                bodyLimit: { head in AdminRoutes.bodyLimit(for: head) },
                handler: { head, body, writer in admin.handle(head, body: body, writer: writer) })
        } else {
            adminServer = nil
        }
    }

    /// Starts both listeners and the purge timer (every 60 s).
    /// - Throws: `HTTPServerError` when a port cannot be bound (if it is the admin one, the public
    ///   listener is stopped again).
    public func start() throws {
        service.metrics.recordConfigurationLoaded(nowSeconds: service.lifecycle.time.nowSeconds())
        try startPublic()
        do { try adminServer?.start() } catch {
            stopPublic()
            throw error
        }
        purgeTimer.start()
        giveBackTimer.start()
        receiptTimer?.start()
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
        giveBackTimer.stop()
        receiptTimer?.stop()
        adminServer?.stop()
        stopPublic()
        // Last: the calls cut by the stop have settled, and their give-backs reach the store.
        service.flushGiveBacks()
    }

    /// Graceful stop: new connections refused, every answer from now on ends its connection
    /// (`Connection: close`); requests in progress (streams included) get up to
    /// `gracePeriodMilliseconds` to finish before the rest are cut.
    public func drain(gracePeriodMilliseconds: Int) {
        service.beginDraining()
        purgeTimer.stop()
        receiptTimer?.stop()
        shards.forEach { $0.server.closeConnectionsAfterAnswers() }
        // Every shard stops accepting first, then all share one deadline.
        let deadline = DispatchTime.now() + .milliseconds(max(0, gracePeriodMilliseconds))
        shards.forEach {
            $0.server.quiesce()
            $0.server.closeQuiescedListener()
        }
        for shard in shards where !shard.server.waitUntilIdle(deadline: deadline) { break }
        service.beginCutting()
        giveBackTimer.stop()
        stopPublic()
        adminServer?.stop()
        service.flushGiveBacks()
    }

    /// Reloads now what SIGHUP reloads, each part on its own: the provider registry and secrets,
    /// then the session keys. A part that fails validation is logged with its reason and the one
    /// in force stays; the others still take effect. One log line per part, then one
    /// `restart_required` line naming each keyward.toml setting that changed (those take a
    /// restart), or `config_reload_refused` when keyward.toml no longer validates. Returns whether
    /// every part took effect (also `keyward_config_last_reload_successful`).
    @discardableResult
    public func reload() -> Bool {
        var succeeded = true
        if let reloadProviders {
            do {
                let next = try reloadProviders()
                service.providers.replace(with: next)
                let count = next.registry.providers.count
                service.logger.info("providers_reloaded", "\(count) provider\(count == 1 ? "" : "s") in force")
            } catch {
                succeeded = false
                service.logger.info("providers_reload_refused", "kept the registry in force: \(error)")
            }
        }
        if let reloadSessionKeys {
            do {
                let keys = try reloadSessionKeys()
                let previousKID = service.sessionKeysInForce.activeKID
                try service.replaceSessionKeys(keys)
                var line = service.logger.line("session_keys_reloaded")
                line.add("signing_kid", keys.activeKID)
                line.add("verify_only_kids", keys.verifyOnlyKIDs.joined(separator: ","))
                // A new signing key with nothing kept to verify the old one's tokens: every live
                // session is refused from now on. Usually the retired-keys file was never given to
                // this process (an environment variable set after start is not seen by a SIGHUP).
                if keys.activeKID != previousKID, keys.verifyOnlyKIDs.isEmpty {
                    line.add("warning", "the signing key changed and no retired keys are configured: sessions signed by the "
                        + "previous key (kid \(previousKID)) are refused (401 kid_unknown); to keep them, list it in "
                        + "KEYWARD_SESSION_KEYS_RETIRED as this process reads it (set at start) and SIGHUP again")
                }
                service.logger.emit(line)
            } catch {
                succeeded = false
                service.logger.info("session_keys_reload_refused", "kept the session keys in force: \(error)")
            }
        }
        if let settingsNeedingRestart {
            do {
                let changed = try settingsNeedingRestart()
                if !changed.isEmpty {
                    var line = service.logger.line("restart_required")
                    line.add("settings", changed.joined(separator: ","))
                    line.add("message", "changed in keyward.toml; these take effect at the next restart, the values in force stay")
                    service.logger.emit(line)
                }
            } catch {
                succeeded = false
                service.logger.info("config_reload_refused", "keyward.toml no longer validates; nothing of it changed: \(error)")
            }
        }
        service.metrics.recordReload(succeeded: succeeded, nowSeconds: service.lifecycle.time.nowSeconds())
        return succeeded
    }

    /// How a SIGTERM stops the server, in two phases (rolling restarts behind a load balancer).
    public struct ShutdownTiming: Sendable {
        /// Phase 1: `/readyz` answers 503 at once while both listeners keep serving, so load
        /// balancers (which poll readiness) move traffic away before anything is refused.
        public var readinessGraceMilliseconds: Int
        /// Phase 2: new connections are refused; requests and streams in progress get this long
        /// to finish, then the rest are cut.
        public var drainMilliseconds: Int

        /// `[shutdown]`'s defaults: 5 s of readiness grace, then up to 30 s of drain.
        public init(readinessGraceMilliseconds: Int = 5_000, drainMilliseconds: Int = 30_000) {
            self.readinessGraceMilliseconds = readinessGraceMilliseconds
            self.drainMilliseconds = drainMilliseconds
        }
    }

    /// Blocks until SIGTERM or SIGINT, reloading on SIGHUP meanwhile; then stops as `timing`
    /// says: `/readyz` 503 at once, the listeners serving on for the readiness grace (a second
    /// SIGTERM or SIGINT ends the grace early), then the drain. The signals are caught into a
    /// pipe read here (`kw_signal_pipe`), so one that arrives while this starts is never lost.
    /// Call once per process.
    public func runUntilTerminated(timing: ShutdownTiming = ShutdownTiming()) {
        let signalPipe = [SIGHUP, SIGTERM, SIGINT].withUnsafeBufferPointer { kw_signal_pipe($0.baseAddress, Int32($0.count)) }
        precondition(signalPipe >= 0, "cannot install the signal handlers")
        while let received = nextSignal(signalPipe, deadline: nil) {
            if received == SIGHUP { _ = reload() } else { break }
        }
        service.beginDraining()
        // Keep-alive connections end after their next answer: clients and load balancers open
        // new ones, which go to instances that are ready.
        shards.forEach { $0.server.closeConnectionsAfterAnswers() }
        service.logger.info(
            "stopping",
            "signal received: /readyz answers 503; serving on for \(timing.readinessGraceMilliseconds) ms, "
                + "then refusing new connections and draining for up to \(timing.drainMilliseconds) ms")
        let graceEnd = DispatchTime.now() + .milliseconds(max(0, timing.readinessGraceMilliseconds))
        while let received = nextSignal(signalPipe, deadline: graceEnd) {
            if received == SIGHUP { _ = reload() } else { break }
        }
        service.logger.info("draining", "refusing new connections; open requests and streams finish")
        drain(gracePeriodMilliseconds: timing.drainMilliseconds)
    }

    /// The next signal number from the pipe, or nil once `deadline` passes (nil deadline: wait
    /// as long as it takes).
    private func nextSignal(_ pipe: Int32, deadline: DispatchTime?) -> Int32? {
        while true {
            var timeout: Int32 = -1
            if let deadline {
                let now = DispatchTime.now().uptimeNanoseconds
                guard deadline.uptimeNanoseconds > now else { return nil }
                timeout = Int32(min(Int64(Int32.max), Int64((deadline.uptimeNanoseconds - now + 999_999) / 1_000_000)))
            }
            var descriptor = pollfd(fd: pipe, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, timeout)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { continue }  // the deadline check above ends the wait
            var received: UInt8 = 0
            let count = read(pipe, &received, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1 else { return nil }  // cannot happen: the write end stays open
            return Int32(received)
        }
    }
}
