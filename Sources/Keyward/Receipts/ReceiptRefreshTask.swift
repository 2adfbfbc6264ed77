/// The scheduled side of receipt refresh: each tick runs one `ReceiptRefresher` pass on the timer's
/// own queue (never an event loop), counts every device's outcome in
/// `keyward_receipt_refreshes_total{outcome}`, records each stored metric in the
/// `keyward_risk_metric` histogram (no per-device labels), and logs one
/// `receipt_refresh` line per device that failed or whose new receipt was refused.
final class ReceiptRefreshTask: Sendable {
    let refresher: ReceiptRefresher
    let everySeconds: Int
    let metrics: Metrics
    let logger: Logger
    let time: any TimeSource

    init(refresher: ReceiptRefresher, everySeconds: Int, metrics: Metrics, logger: Logger, time: any TimeSource) {
        self.refresher = refresher
        self.everySeconds = everySeconds
        self.metrics = metrics
        self.logger = logger
        self.time = time
    }

    /// One pass at the current time.
    func runOnce() {
        let pass: ReceiptRefresher.Pass
        do {
            pass = try refresher.runOnce(now: time.nowSeconds())
        } catch {
            metrics.increment("keyward_receipt_refreshes_total", ["outcome": "store_error"])
            log(device: nil, outcome: "store_error", reason: error.reason)
            return
        }
        for (device, outcome) in pass.outcomes.sorted(by: { $0.key < $1.key }) {
            switch outcome {
            case .refreshed(let metric):
                metrics.increment("keyward_receipt_refreshes_total", ["outcome": "refreshed"])
                metrics.observeRiskMetric(metric)
            case .notModified: metrics.increment("keyward_receipt_refreshes_total", ["outcome": "not_modified"])
            case .noData: metrics.increment("keyward_receipt_refreshes_total", ["outcome": "no_data"])
            case .failed(let reason):
                // Apple unreachable or answering an error: the device keeps its last metric (fail open).
                metrics.increment("keyward_receipt_refreshes_total", ["outcome": "failed"])
                log(device: device, outcome: "failed", reason: reason)
            case .refused(let reason):
                metrics.increment("keyward_receipt_refreshes_total", ["outcome": "refused"])
                log(device: device, outcome: "refused", reason: reason)
            case .storeFailed(let reason):
                metrics.increment("keyward_receipt_refreshes_total", ["outcome": "store_error"])
                log(device: device, outcome: "store_error", reason: reason)
            }
        }
    }

    private func log(device: String?, outcome: String, reason: String) {
        var line = logger.line("receipt_refresh")
        line.addIfPresent("device", device)
        line.add("outcome", outcome)
        line.add("reason", reason)
        logger.emit(line)
    }
}
