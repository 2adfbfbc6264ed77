import Foundation
import Keyward
import HTTPServer
import TOMLDecoding
import Upstream

/// `keyward serve`: run the proxy until SIGTERM/SIGINT; SIGHUP reloads providers.toml and the
/// provider secrets (an invalid registry is logged and the one in force stays).
enum ServeCommand {
    static let usage = """
        usage: keyward serve [--config FILE]

        Runs Keyward as configured by keyward.toml (default ./keyward.toml or $KEYWARD_CONFIG).
        Secrets come from the environment or files: KEYWARD_SESSION_KEY (PKCS#8 PEM, P-256),
        optionally KEYWARD_SESSION_KEYS_RETIRED, and each provider's secret; NAME_FILE and
        $CREDENTIALS_DIRECTORY/NAME are read too. Logs are JSON lines on standard error.
        Signals: SIGHUP reloads providers.toml, provider secrets and the session keys (and names
        any changed keyward.toml setting, which takes a restart); SIGTERM/SIGINT: /readyz 503 at
        once, serving on for [shutdown] readiness_grace_seconds, then draining for drain_seconds.

        exit codes: 0 stopped by a signal, 1 could not start (the reason is printed), 2 usage error
        """

    static func run(_ arguments: [String]) -> Int32 {
        guard let options = CLIOutput.options(arguments, command: "serve", usage: usage, valueFlags: ["config"]) else { return 2 }
        if options.has("help") { print(usage); return 0 }
        guard let configuration = CLIOutput.configuration(options, command: "serve") else { return 1 }
        let configurationPath = CLIOutput.configPath(options)
        AllocatorTuning.applyForServer()
        let secrets = SecretSource()
        let time = SystemTimeSource()
        let logSink = BufferedLogSink()
        defer { logSink.flush() }
        let logger = Logger(sink: logSink, time: time)
        do {
            let keys = try ServiceAssembly.sessionKeys(secrets)
            let providersPath = configuration.providersPath
            let providers = ProviderTable(try ServiceAssembly.providers(path: providersPath, secrets: secrets))
            let budget = ConnectionBudget.raiseOpenFileLimit()
            logger.info("open_file_limit", budget.message)
            let store = try ServiceAssembly.waitForStore(configuration, logger: logger)
            let asyncStore = try ServiceAssembly.asyncStore(store, configuration, nowMillis: time.nowMillis())
            // Proxied requests go through the shards' own clients (one per core, see Shard);
            // this one only carries the Android handshake's calls to Google.
            let upstream = UpstreamClient(threadName: "kw-google")
            let android = try AndroidAssembly.handshake(configuration, secrets: secrets, upstream: upstream)
            var settings = ServiceAssembly.settings(from: configuration)
            settings.appKeys = try ServiceAssembly.appKeys(configuration, secrets: secrets)
            let deviceCheck = try ServiceAssembly.deviceCheck(configuration, secrets: secrets, upstream: upstream)
            let connectionLimit = configuration.maxConnections ?? budget.defaultMaxConnections
            // A provider can hold at most one upstream connection per client connection.
            settings.maxUpstreamConnections = connectionLimit
            settings.adminToken = try ServiceAssembly.adminToken(secrets)
            let service = try KeywardService(
                settings: settings, store: store, sessionKeys: keys, providers: providers,
                upstream: upstream, time: time, logger: logger, metrics: Metrics(), android: android,
                asyncStore: asyncStore, deviceCheck: deviceCheck)
            let server = KeywardServer(
                service: service,
                publicListener: HTTPServerConfiguration(
                    host: configuration.proxyListen.bindHost, port: configuration.proxyListen.port,
                    connectionLimit: connectionLimit, maxHeaderBytes: configuration.maxHeaderBytes),
                adminListener: HTTPServerConfiguration(host: configuration.adminListen.bindHost, port: configuration.adminListen.port),
                reloadProviders: { try ServiceAssembly.providers(path: providersPath, secrets: SecretSource()) },
                reloadSessionKeys: { try ServiceAssembly.sessionKeys(SecretSource()) },
                settingsNeedingRestart: {
                    configuration.settingsNeedingRestart(toBecome: try KeywardConfiguration.load(path: configurationPath))
                },
                // One shard per core: a request stays on one thread from its first byte to its last.
                // On two cores `bench/proxy.sh` served ~7% more requests per second this way than
                // with two HTTP server threads handing off to two libcurl threads (alternating
                // runs). Each shard's libcurl may open as many connections to a provider's host as
                // the instance has client connections; a provider's own bound, across the shards,
                // is its `max_upstream_connections` (`UpstreamSlots`).
                shards: min(16, HTTPServerConfiguration.onlineCores()),
                shardUpstream: UpstreamClient.Configuration(maxConnectionsPerHost: connectionLimit))
            do { try server.start() } catch let error as HTTPServerError {
                throw listenFailure(error, configuration)
            }
            logger.info(
                "started",
                "proxy on \(ListenAddress(host: configuration.proxyListen.host, port: server.port)), "
                    + "admin on \(ListenAddress(host: configuration.adminListen.host, port: server.adminPort ?? 0)), "
                    + "\(providers.current.registry.names.count) provider\(providers.current.registry.names.count == 1 ? "" : "s"), iOS \(configuration.apple == nil ? "off" : "on"), "
                    + "Android \(configuration.android == nil ? "off" : "on")")
            server.runUntilTerminated(timing: .init(
                readinessGraceMilliseconds: configuration.readinessGraceSeconds * 1000,
                drainMilliseconds: configuration.drainSeconds * 1000))
            upstream.shutdown()
            logger.info("stopped", "listeners closed, upstream transfers ended")
            return 0
        } catch {
            CLIOutput.error("keyward serve: \(error)")
            return 1
        }
    }

    /// A listener that could not start, named by the keyward.toml file, line and key that set its
    /// address (`listen.proxy` unless the failing address is the admin listener's).
    static func listenFailure(_ error: HTTPServerError, _ configuration: KeywardConfiguration) -> ConfigError {
        var origin = configuration.proxyListenOrigin
        switch error {
        case .startFailed(let host, let port)
            where host == configuration.adminListen.bindHost && port == configuration.adminListen.port
                && !(host == configuration.proxyListen.bindHost && port == configuration.proxyListen.port):
            origin = configuration.adminListenOrigin
        case .invalidHost(let host) where host == configuration.adminListen.bindHost && host != configuration.proxyListen.bindHost:
            origin = configuration.adminListenOrigin
        default: break
        }
        return ConfigError(file: origin.file, line: origin.line, key: origin.key, message: error.description)
    }
}
