import Synchronization

/// Counters, gauges and one latency histogram, rendered in the Prometheus text exposition
/// format (version 0.0.4) on the admin listener's `/metrics`.
///
/// Label values are route names, provider names, status codes and reason slugs: a bounded set,
/// never anything a client chose freely (an unknown provider is counted as `provider="-"`).
public final class Metrics: Sendable {
    /// Counter families: name → help text. Rendering walks this list so the output is stable.
    static let counterFamilies: [(name: String, help: String)] = [
        ("keyward_requests_total", "Requests answered, by route, provider and status."),
        ("keyward_attestations_total", "App Attest attestations and Play Integrity verdicts, by platform and outcome (ok or reason slug)."),
        ("keyward_assertions_total", "App Attest assertions (handshake and per-request), by outcome (ok or reason slug)."),
        ("keyward_rate_limited_total", "Requests refused by a rate limit or budget, by limit."),
        ("keyward_store_errors_total", "Store operations that failed, by operation."),
        ("keyward_upstream_errors_total", "Upstream transfers that failed, by provider and reason."),
        ("keyward_credits_spent_total", "Credits charged to the daily budgets, by provider and tier."),
        ("keyward_credits_released_total", "Credits given back for calls the provider never answered usefully, and the unused part of metered calls' holds, by provider and tier."),
        ("keyward_metered_calls_total", "Calls of metered allow rules at their end, by provider and outcome (settled: charged the reported usage; no_usage: no usage seen, the hold kept; over_hold: the usage was above the hold, the hold kept; released: given back whole)."),
        ("keyward_metered_tokens_total", "Tokens reported by providers of metered calls (settled, or over their hold), by provider and kind (input, output)."),
        ("keyward_budget_warnings_total", "Daily warnings that the app's credits crossed warn_at_percent of its ceiling."),
        ("keyward_app_key_requests_total", "Handshake route requests by publishable app key name and outcome (ok, rate_limited; app=\"-\" invalid)."),
        ("keyward_devicecheck_total", "DeviceCheck look-ups at attest time and bit-0 updates, by outcome (unreachable = failed open)."),
        ("keyward_play_integrity_decodes_total", "Standard-mode Android handshakes at the decode step, by outcome (ok, refused_by_policy, google_error, budget_refused)."),
        ("keyward_install_credential_refreshes_total", "Android install credentials presented at /v1/refresh, by outcome (rotated, retried or reason slug)."),
        ("keyward_config_reloads_total", "SIGHUP reloads, by outcome (ok or refused)."),
        ("keyward_admin_requests_total", "Admin API requests (/admin/), by route template and status."),
        ("keyward_receipt_refreshes_total", "App Attest receipt exchanges at Apple's receipt endpoint, by outcome (refreshed, not_modified, no_data, failed = failed open, refused, store_error)."),
        ("keyward_gate_would_block_total", "Handshakes the gate admitted that [gate] mode = \"enforce\" would have refused, by route and reason slug."),
    ]

    /// Upper bounds of the risk metric buckets (Apple's count of attested keys on one phone in 30 days).
    static let riskMetricBuckets: [Int] = [1, 2, 3, 5, 10, 20, 50, 100]

    /// Upper bounds of the upstream latency buckets, in seconds (time to response headers).
    static let latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

    /// One `keyward_requests_total` series. It is counted once per request, so it is kept as plain
    /// values (no label text built on the request path) and rendered on demand.
    private struct RequestSeries: Hashable {
        let route: String
        let provider: String
        let status: Int
    }

    private struct State: ~Copyable {
        var counters: [String: [String: Int64]] = [:]
        var requestCounts: [RequestSeries: Int64] = [:]
        /// Histogram buckets and sums, keyed by provider name.
        var latencyCounts: [String: [Int64]] = [:]
        var latencySums: [String: Double] = [:]
        /// The risk metric histogram: one count per bucket, plus `+Inf`, and the sum.
        var riskCounts = [Int64](repeating: 0, count: Metrics.riskMetricBuckets.count + 1)
        var riskSum: Int64 = 0
    }

    private let state = Mutex(State())
    private let openStreamCount = Atomic<Int>(0)
    private let appCreditsUsed = Atomic<Int>(0)
    /// 1 when the last reload (or the start, before any) took effect, 0 when it was refused.
    private let lastReloadSucceeded = Atomic<Int>(1)
    /// Unix seconds of the last reload that took effect; 0 before the first.
    private let lastReloadSuccessSeconds = Atomic<Int64>(0)

    /// `[gate] mode` in force, for the `keyward_gate_mode` gauge.
    private let gateMode = Mutex("enforce")

    /// The public listener's connection figures, read when `/metrics` is rendered.
    public struct ConnectionFigures: Sendable, Equatable {
        /// Client connections open now, idle keep-alive ones included.
        public var open: Int
        /// Times since start an event loop filled its share of `[listen] max_connections` and
        /// stopped accepting.
        public var limitReached: Int

        public init(open: Int, limitReached: Int) {
            self.open = open
            self.limitReached = limitReached
        }
    }

    /// Where the connection figures come from: the server sets it once its listeners exist.
    private let connectionFigures = Mutex<(@Sendable () -> ConnectionFigures)?>(nil)

    /// Empty counters and histogram; the open-streams gauge at 0.
    public init() {}

    /// Makes `/metrics` report `source`'s figures as `keyward_client_connections` and
    /// `keyward_connection_limit_reached_total`. Called once by the server that owns the listeners.
    public func reportConnections(from source: @escaping @Sendable () -> ConnectionFigures) {
        connectionFigures.withLock { $0 = source }
    }

    /// Adds one to counter `name` for the label set `labels` (pairs of label name and value): the
    /// untyped form under ``count(_:)``, which is what the service calls.
    public func increment(_ name: String, _ labels: KeyValuePairs<String, String>) {
        let key = Metrics.labelText(labels)
        state.withLock { state in state.counters[name, default: [:]][key, default: 0] += 1 }
    }

    /// Adds `amount` to counter `name` for `labels` (credits, which a call moves by its cost).
    public func increment(_ name: String, _ labels: KeyValuePairs<String, String>, by amount: Int64) {
        let key = Metrics.labelText(labels)
        state.withLock { state in state.counters[name, default: [:]][key, default: 0] += amount }
    }

    /// Adds `amount` to counter `name` for the label set whose text is `labelText`, made once with
    /// ``labelText(_:)`` by a caller that moves the same series on every call (a metered settle).
    func increment(_ name: String, labelText: String, by amount: Int64) {
        state.withLock { state in state.counters[name, default: [:]][labelText, default: 0] += amount }
    }

    /// Sets the mode the `keyward_gate_mode{mode}` gauge shows as 1 (`enforce`, `monitor` or `off`).
    public func setGateMode(_ mode: String) { gateMode.withLock { $0 = mode } }

    /// Sets the `keyward_app_credits_used` gauge: the app's credits used today as the last spend saw them.
    public func setAppCreditsUsed(_ used: Int) { appCreditsUsed.store(used, ordering: .relaxed) }

    /// Lowers `keyward_app_credits_used` by `credits` given back, without reading the store: the
    /// next spend sets it from the store's own count again.
    public func lowerAppCreditsUsed(by credits: Int) {
        var current = appCreditsUsed.load(ordering: .relaxed)
        while true {
            let (exchanged, original) = appCreditsUsed.compareExchange(
                expected: current, desired: max(0, current - credits), ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// Adds one to `keyward_requests_total{route,provider,status}`, the counter every request moves.
    /// - Parameters: `provider` is "-" on routes without one; `status` is the HTTP status sent.
    public func countRequest(route: String, provider: String, status: Int) {
        let series = RequestSeries(route: route, provider: provider, status: status)
        state.withLock { $0.requestCounts[series, default: 0] += 1 }
    }

    /// The current value of a counter (tests and the demo read it).
    public func value(_ name: String, _ labels: KeyValuePairs<String, String>) -> Int64 {
        let key = Metrics.labelText(labels)
        return state.withLock { Metrics.series(of: name, in: $0)[key] ?? 0 }
    }

    /// A counter family's series, label text → value: those of `increment` plus, for
    /// `keyward_requests_total`, those of `countRequest`.
    private static func series(of name: String, in state: borrowing State) -> [String: Int64] {
        var series = state.counters[name] ?? [:]
        if name == "keyward_requests_total" {
            for (request, count) in state.requestCounts {
                let labels = labelText(["route": request.route, "provider": request.provider, "status": String(request.status)])
                series[labels, default: 0] += count
            }
        }
        return series
    }

    /// A provider's first histogram: one count per bucket, plus `+Inf`.
    private static let emptyLatencyCounts = [Int64](repeating: 0, count: latencyBuckets.count + 1)

    /// Records the time an upstream took to send its response headers, in seconds.
    public func observeUpstreamLatency(provider: String, seconds: Double) {
        let bucket = Metrics.latencyBuckets.firstIndex(where: { seconds <= $0 }) ?? Metrics.latencyBuckets.count
        state.withLock { state in
            // The `default:` subscript modifies the stored array in place; `[provider]?[bucket]`
            // copied it on every call (three allocations per proxied request).
            state.latencyCounts[provider, default: Metrics.emptyLatencyCounts][bucket] += 1
            state.latencySums[provider, default: 0] += seconds
        }
    }

    /// Records one risk metric a refreshed receipt carried (`keyward_risk_metric`; no device label).
    public func observeRiskMetric(_ metric: Int) {
        let bucket = Metrics.riskMetricBuckets.firstIndex(where: { metric <= $0 }) ?? Metrics.riskMetricBuckets.count
        state.withLock { state in
            state.riskCounts[bucket] += 1
            state.riskSum += Int64(metric)
        }
    }

    /// Records a SIGHUP reload: `keyward_config_reloads_total{outcome}`, the
    /// `keyward_config_last_reload_successful` gauge and, when it took effect,
    /// `keyward_config_last_reload_success_timestamp_seconds` (`nowSeconds`, Unix seconds).
    public func recordReload(succeeded: Bool, nowSeconds: Int64) {
        increment("keyward_config_reloads_total", ["outcome": succeeded ? "ok" : "refused"])
        lastReloadSucceeded.store(succeeded ? 1 : 0, ordering: .relaxed)
        if succeeded { lastReloadSuccessSeconds.store(nowSeconds, ordering: .relaxed) }
    }

    /// The configuration in force was loaded at start (`nowSeconds`, Unix seconds): the
    /// last-success timestamp starts there, as Prometheus's own does, so an alert on its age
    /// does not fire for an instance that was never reloaded.
    public func recordConfigurationLoaded(nowSeconds: Int64) {
        lastReloadSuccessSeconds.store(nowSeconds, ordering: .relaxed)
    }

    /// A proxied response stream opened: `keyward_open_streams` +1.
    public func streamOpened() { openStreamCount.add(1, ordering: .relaxed) }
    /// A proxied response stream ended, however it ended: `keyward_open_streams` −1, once per `streamOpened()`.
    public func streamClosed() { openStreamCount.subtract(1, ordering: .relaxed) }
    /// Proxied responses streaming now (the `keyward_open_streams` gauge).
    public var openStreams: Int { openStreamCount.load(ordering: .relaxed) }

    /// The whole exposition, `# HELP`/`# TYPE` lines included, ending in a newline.
    public func render() -> String {
        var out = ""
        state.withLock { state in
            for family in Metrics.counterFamilies {
                out += "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) counter\n"
                for (labels, value) in Metrics.series(of: family.name, in: state).sorted(by: { $0.key < $1.key }) {
                    out += "\(family.name)\(labels) \(value)\n"
                }
            }
            let histogram = "keyward_upstream_header_seconds"
            out += "# HELP \(histogram) Time from sending the upstream request to its response headers.\n"
            out += "# TYPE \(histogram) histogram\n"
            for (provider, counts) in state.latencyCounts.sorted(by: { $0.key < $1.key }) {
                let labels = Metrics.labelText(["provider": provider])
                let inner = labels.dropFirst().dropLast()  // provider="x"
                var cumulative: Int64 = 0
                for (index, bound) in Metrics.latencyBuckets.enumerated() {
                    cumulative += counts[index]
                    out += "\(histogram)_bucket{\(inner),le=\"\(bound)\"} \(cumulative)\n"
                }
                cumulative += counts[Metrics.latencyBuckets.count]
                out += "\(histogram)_bucket{\(inner),le=\"+Inf\"} \(cumulative)\n"
                out += "\(histogram)_sum\(labels) \(state.latencySums[provider] ?? 0)\n"
                out += "\(histogram)_count\(labels) \(cumulative)\n"
            }
            let risk = "keyward_risk_metric"
            out += "# HELP \(risk) Risk metrics of the receipts refreshed at Apple (approximate attested keys per phone in 30 days).\n"
            out += "# TYPE \(risk) histogram\n"
            var cumulative: Int64 = 0
            for (index, bound) in Metrics.riskMetricBuckets.enumerated() {
                cumulative += state.riskCounts[index]
                out += "\(risk)_bucket{le=\"\(bound)\"} \(cumulative)\n"
            }
            cumulative += state.riskCounts[Metrics.riskMetricBuckets.count]
            out += "\(risk)_bucket{le=\"+Inf\"} \(cumulative)\n\(risk)_sum \(state.riskSum)\n\(risk)_count \(cumulative)\n"
        }
        out += "# HELP keyward_open_streams Proxied responses currently streaming.\n# TYPE keyward_open_streams gauge\n"
        out += "keyward_open_streams \(openStreams)\n"
        if let figures = connectionFigures.withLock({ $0 })?() {
            out += "# HELP keyward_client_connections Client connections open on the public listener, idle keep-alive ones included.\n"
            out += "# TYPE keyward_client_connections gauge\nkeyward_client_connections \(figures.open)\n"
            out += "# HELP keyward_connection_limit_reached_total Times an event loop filled its share of [listen] max_connections and stopped accepting (new clients wait in the listen backlog).\n"
            out += "# TYPE keyward_connection_limit_reached_total counter\nkeyward_connection_limit_reached_total \(figures.limitReached)\n"
        }
        out += "# HELP keyward_app_credits_used The app's credits used today, as the latest spend saw them.\n# TYPE keyward_app_credits_used gauge\n"
        out += "keyward_app_credits_used \(appCreditsUsed.load(ordering: .relaxed))\n"
        out += "# HELP keyward_config_last_reload_successful Whether the last SIGHUP reload took effect (1) or was refused (0).\n"
        out += "# TYPE keyward_config_last_reload_successful gauge\n"
        out += "keyward_config_last_reload_successful \(lastReloadSucceeded.load(ordering: .relaxed))\n"
        out += "# HELP keyward_config_last_reload_success_timestamp_seconds When the last reload took effect (Unix seconds; 0: none yet).\n"
        out += "# TYPE keyward_config_last_reload_success_timestamp_seconds gauge\n"
        out += "keyward_config_last_reload_success_timestamp_seconds \(lastReloadSuccessSeconds.load(ordering: .relaxed))\n"
        out += "# HELP keyward_gate_mode The [gate] mode in force (the series of that mode is 1).\n# TYPE keyward_gate_mode gauge\n"
        out += "keyward_gate_mode\(Metrics.labelText(["mode": gateMode.withLock { $0 }])) 1\n"
        out += ProcessMetrics.render()
        return out
    }

    /// `{a="x",b="y"}` with values escaped per the exposition format (backslash, quote, newline);
    /// empty for no labels (a bare `name value` line: the format has no empty braces).
    static func labelText(_ labels: KeyValuePairs<String, String>) -> String {
        guard !labels.isEmpty else { return "" }
        // Sized first, then written in place: one allocation per label set, however many labels
        // (a proxied call moves several counters, a metered one a few more).
        var size = 1   // the closing brace
        for (name, value) in labels {
            size += name.utf8.count + 4   // `{` or `,`, `=`, the two quotes
            for byte in value.utf8 { size += Self.needsEscape(byte) ? 2 : 1 }
        }
        return String(unsafeUninitializedCapacity: size) { buffer in
            var at = 0
            func put(_ byte: UInt8) {
                buffer[at] = byte
                at += 1
            }
            for (index, (name, value)) in labels.enumerated() {
                put(index == 0 ? UInt8(ascii: "{") : UInt8(ascii: ","))
                for byte in name.utf8 { put(byte) }
                put(UInt8(ascii: "="))
                put(UInt8(ascii: "\""))
                for byte in value.utf8 {
                    switch byte {
                    case UInt8(ascii: "\\"): put(byte); put(byte)
                    case UInt8(ascii: "\""): put(UInt8(ascii: "\\")); put(byte)
                    case UInt8(ascii: "\n"): put(UInt8(ascii: "\\")); put(UInt8(ascii: "n"))
                    default: put(byte)
                    }
                }
                put(UInt8(ascii: "\""))
            }
            put(UInt8(ascii: "}"))
            return at
        }
    }

    /// Backslash, quote and newline are written escaped in a label value (two bytes each); these
    /// are ASCII, never part of a multi-byte UTF-8 sequence, so bytes can be tested one by one.
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\n")
    }
}
