import Store
import Synchronization

/// The allowance half of DeviceCheck anti-farming: when a device is first refused by a provider's
/// `per_day` limit, bit 0 of its phone is set at Apple (bit 1 kept as Apple has it), so a reinstall
/// on that phone (a new App Attest key) is recognised by ``DeviceCheckGate``.
///
/// Called from the proxy's authorize phase on a loop thread, it only hands the work to the
/// blocking executor: the store read and Apple's two calls run there. Each device is marked once
/// per process (a bounded set), and a failure is counted and logged, never retried in a loop.
final class DeviceCheckMarker: Sendable {
    let client: DeviceCheckClient
    let store: any Store
    let executor: BlockingExecutor
    let metrics: Metrics
    let logger: Logger
    let time: any TimeSource
    private let marked = Mutex<Set<String>>([])
    private static let markedCapacity = 100_000

    init(client: DeviceCheckClient, store: any Store, executor: BlockingExecutor, metrics: Metrics, logger: Logger, time: any TimeSource) {
        self.client = client
        self.store = store
        self.executor = executor
        self.metrics = metrics
        self.logger = logger
        self.time = time
    }

    /// Sets bit 0 of `deviceID`'s phone, in the background, once.
    func allowanceExhausted(deviceID: String) {
        let first = marked.withLock { set in
            if set.count >= Self.markedCapacity { set.removeAll(keepingCapacity: true) }
            return set.insert(deviceID).inserted
        }
        guard first else { return }
        let accepted = executor.submit { [self] in self.mark(deviceID) }
        if !accepted { outcome("update_queue_full", deviceID: deviceID) }
    }

    private func mark(_ deviceID: String) {
        let device: DeviceRecord?
        do { device = try store.device(id: deviceID) } catch {
            outcome("update_store_failed", deviceID: deviceID)
            return
        }
        guard let device, !device.deviceCheckToken.isEmpty else {
            outcome("update_no_token", deviceID: deviceID)
            return
        }
        do {
            let now = time.nowMillis()
            let current = try client.query(deviceToken: device.deviceCheckToken, nowMillis: now)
            if current?.bit0 == true {
                outcome("already_set", deviceID: deviceID)
                return
            }
            try client.update(deviceToken: device.deviceCheckToken, bits: .init(bit0: true, bit1: current?.bit1 ?? false), nowMillis: now)
            outcome("bit_set", deviceID: deviceID)
        } catch {
            outcome("update_failed", deviceID: deviceID, reason: error.reason)
        }
    }

    /// Counts the outcome; logs it unless it is the ordinary case of a device without a token (Android, or an app that sends none).
    private func outcome(_ name: String, deviceID: String, reason: String? = nil) {
        metrics.count(.deviceCheck(outcome: name))
        guard name != "update_no_token" else { return }
        var line = logger.line("devicecheck_mark")
        line.add("device", deviceID)
        line.add("outcome", name)
        line.addIfPresent("reason", reason)
        logger.emit(line)
    }
}
