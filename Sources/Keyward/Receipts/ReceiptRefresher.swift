import AppAttest
import Foundation
import Store
import Synchronization

/// One pass of App Attest receipt refresh: the devices whose next refresh is due, each exchanged at
/// Apple's receipt endpoint at most `concurrency` at a time, the new receipt verified
/// (`ReceiptVerifier`, matched to the device's App ID, key and environment) and stored with its risk
/// metric. Blocking (store calls, HTTP with deadlines): run it on a thread of its own, never on an
/// event loop.
///
/// Rules per device:
/// - a verified `RECEIPT` is stored with its metric; the next refresh is no sooner than its
///   not-before (field 19) nor `minIntervalSeconds` from now;
/// - 304 (too soon) and 404 (no data) keep the stored receipt and postpone by `minIntervalSeconds`;
/// - Apple unreachable, another status, or a receipt that does not verify: nothing stored, the
///   refresh postponed by `retrySeconds`, and the reason counted — the device keeps its last metric
///   and its sessions (fail open).
public final class ReceiptRefresher: Sendable {
    /// What one device's refresh came to.
    public enum Outcome: Sendable, Equatable {
        case refreshed(riskMetric: Int)
        case notModified
        case noData
        /// Apple unreachable or not answering usefully: the ``ReceiptRefreshClient/Failure`` reason.
        case failed(String)
        /// Apple answered a receipt that does not verify: the `AppAttestError` reason.
        case refused(String)
        /// The store failed: its reason.
        case storeFailed(String)
    }

    /// The outcomes of one pass, per device id.
    public struct Pass: Sendable {
        public let outcomes: [String: Outcome]
    }

    let store: any Store
    let client: ReceiptRefreshClient
    let verifier: ReceiptVerifier
    let minIntervalSeconds: Int64
    let retrySeconds: Int64
    let batch: Int
    let concurrency: Int

    /// - Parameters:
    ///   - store: where devices and receipts live.
    ///   - client: Apple's receipt endpoint.
    ///   - verifier: the receipts' anchor (Apple Root CA - G3 unless a test passes its own).
    ///   - minIntervalSeconds: the least time between two exchanges of one device (≥ 1).
    ///   - retrySeconds: the wait after a failed exchange (≥ 1).
    ///   - batch: most devices one pass handles; concurrency: most exchanges in flight (1…16).
    public init(store: any Store, client: ReceiptRefreshClient, verifier: ReceiptVerifier = ReceiptVerifier(),
                minIntervalSeconds: Int64, retrySeconds: Int64, batch: Int = 100, concurrency: Int = 2) {
        self.store = store
        self.client = client
        self.verifier = verifier
        self.minIntervalSeconds = max(1, minIntervalSeconds)
        self.retrySeconds = max(1, retrySeconds)
        self.batch = max(1, batch)
        self.concurrency = min(max(1, concurrency), 16)
    }

    /// Refreshes the devices due at `now` (unix seconds).
    /// - Throws: `StoreError` when the due devices cannot be read (nothing was asked then).
    public func runOnce(now: Int64) throws(StoreError) -> Pass {
        let devices = try store.devicesDueForReceiptRefresh(now: now, limit: batch)
        let outcomes = Mutex<[String: Outcome]>([:])
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: min(concurrency, devices.count)) { _ in
            while true {
                let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
                guard index < devices.count else { return }
                let outcome = refresh(devices[index], now: now)
                outcomes.withLock { $0[devices[index].id] = outcome }
            }
        }
        return Pass(outcomes: outcomes.withLock { $0 })
    }

    private func refresh(_ device: DeviceRecord, now: Int64) -> Outcome {
        let answer: ReceiptRefreshClient.Answer
        do {
            answer = try client.exchange(receipt: device.receipt, now: now)
        } catch {
            return postpone(device, by: retrySeconds, now: now, outcome: .failed(error.reason))
        }
        switch answer {
        case .notModified: return postpone(device, by: minIntervalSeconds, now: now, outcome: .notModified)
        case .noData: return postpone(device, by: minIntervalSeconds, now: now, outcome: .noData)
        case .receipt(let bytes):
            let binding = ReceiptBinding.device(appID: device.appID, publicKey: device.publicKey,
                                                environment: AppAttestEnvironment(rawValue: device.environment))
            let fields: AppAttestReceipt
            do {
                fields = try verifier.verify(receipt: bytes, at: now, binding: binding)
            } catch {
                return postpone(device, by: retrySeconds, now: now, outcome: .refused(error.reason))
            }
            guard fields.kind == .receipt, let metric = fields.riskMetric else {
                return postpone(device, by: retrySeconds, now: now, outcome: .refused(AppAttestError.Code.receiptTypeUnexpected.rawValue))
            }
            let after = max(fields.notBefore ?? now, now + minIntervalSeconds)
            do {
                _ = try store.storeRefreshedReceipt(deviceID: device.id, receipt: bytes, riskMetric: metric, refreshedAt: now, refreshAfter: after)
            } catch {
                return .storeFailed(error.reason)
            }
            return .refreshed(riskMetric: metric)
        }
    }

    private func postpone(_ device: DeviceRecord, by seconds: Int64, now: Int64, outcome: Outcome) -> Outcome {
        do {
            _ = try store.postponeReceiptRefresh(deviceID: device.id, until: now + seconds)
        } catch {
            return .storeFailed(error.reason)
        }
        return outcome
    }
}
