import Foundation
import KeywardSupport

/// What the store executor has done: a latency histogram per operation (submission to answer,
/// deadline answers included) and the count of deadline answers, rendered in the Prometheus text
/// format next to the rest of `/metrics`. Operation names are a fixed set chosen by the callers.
final class StoreMetrics: Sendable {
    /// Upper bounds of the latency buckets, seconds.
    static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    private struct Series {
        var counts = [Int64](repeating: 0, count: StoreMetrics.buckets.count + 1)
        var sum: Double = 0
        var timeouts: Int64 = 0

        /// One answer, in place (one look-up of the series per observation, under the lock).
        mutating func record(bucket: Int, seconds: Double, timedOut: Bool) {
            counts[bucket] += 1
            sum += seconds
            if timedOut { timeouts += 1 }
        }
    }

    private let series = Locked<[String: Series]>([:])

    /// Records one answered operation.
    func observe(_ operation: String, seconds: Double, timedOut: Bool) {
        let bucket = Self.buckets.firstIndex { seconds <= $0 } ?? Self.buckets.count
        series.withLock { table in table[operation, default: Series()].record(bucket: bucket, seconds: seconds, timedOut: timedOut) }
    }

    /// The families, each with `# HELP` and `# TYPE`, ending in a newline.
    func render(inUse: Int, poolSize: Int, queueDepth: Int, queueFull: Int) -> String {
        let snapshot = series.withLock { $0 }.sorted { $0.key < $1.key }
        var out = "# HELP keyward_store_operation_seconds Store operations from submission to answer, by operation.\n"
        out += "# TYPE keyward_store_operation_seconds histogram\n"
        for (operation, values) in snapshot {
            var cumulative: Int64 = 0
            for (index, bound) in Self.buckets.enumerated() {
                cumulative += values.counts[index]
                out += "keyward_store_operation_seconds_bucket{operation=\"\(operation)\",le=\"\(bound)\"} \(cumulative)\n"
            }
            cumulative += values.counts[Self.buckets.count]
            out += "keyward_store_operation_seconds_bucket{operation=\"\(operation)\",le=\"+Inf\"} \(cumulative)\n"
            out += "keyward_store_operation_seconds_sum{operation=\"\(operation)\"} \(values.sum)\n"
            out += "keyward_store_operation_seconds_count{operation=\"\(operation)\"} \(cumulative)\n"
        }
        out += "# HELP keyward_store_timeouts_total Store operations answered by their deadline (503), by operation.\n"
        out += "# TYPE keyward_store_timeouts_total counter\n"
        for (operation, values) in snapshot {
            out += "keyward_store_timeouts_total{operation=\"\(operation)\"} \(values.timeouts)\n"
        }
        out += "# HELP keyward_store_queue_full_total Store operations refused at once because the queue was full.\n"
        out += "# TYPE keyward_store_queue_full_total counter\nkeyward_store_queue_full_total \(queueFull)\n"
        out += "# HELP keyward_store_queue_depth Store operations waiting for a thread.\n"
        out += "# TYPE keyward_store_queue_depth gauge\nkeyward_store_queue_depth \(queueDepth)\n"
        out += "# HELP keyward_store_pool_in_use Store threads (connections) running an operation.\n"
        out += "# TYPE keyward_store_pool_in_use gauge\nkeyward_store_pool_in_use \(inUse)\n"
        out += "# HELP keyward_store_pool_size Store threads (connections) in the pool.\n"
        out += "# TYPE keyward_store_pool_size gauge\nkeyward_store_pool_size \(poolSize)\n"
        return out
    }
}
