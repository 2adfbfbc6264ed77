import HTTPFields
import ProviderRegistry
import Synchronization

/// One call of a metered allow rule (`meter`, `credits_per_1k_tokens`) after its hold was charged:
/// it reads the provider's reported usage from the answer's bytes as ``ProxyExchange`` relays them
/// (``observe(_:)`` only reads, never keeps or changes a byte) and, when the transfer ends,
/// settles the hold.
///
/// Settling: an answer that arrived whole (2xx, the transfer ended without error) with its usage is
/// charged ``MeterRule/credits(input:output:)``, and the rest of the hold is given back (one
/// conditional store write, like every release, so budgets stay exact across instances). Anything
/// else keeps the hold, minus what the release rules of "Spend control" already gave back (the
/// whole hold, for a call the provider never billed), and is counted as `no_usage`. Usage above
/// the hold keeps the hold (`over_hold`): the hold is the most one call is charged.
final class MeteredCall: Sendable {
    private struct State {
        var scanner: UsageScanner?
        var status = 0
        /// The whole hold was given back (a release rule): nothing is left to settle.
        var released = false
        var settled = false
        var recorded = UsageScanner.Usage()
    }

    let rule: MeterRule
    /// Credits held before the call.
    let hold: Int
    /// The hold's charge; nil when spend control is off (the usage is still logged).
    let charge: CreditCharge?
    private let credits: CreditGate?
    private let record: RequestRecord
    private let metrics: Metrics
    private let provider: String
    private let state = Mutex(State())

    init(rule: MeterRule, hold: Int, charge: CreditCharge?, credits: CreditGate?, record: RequestRecord, metrics: Metrics, provider: String) {
        self.rule = rule
        self.hold = hold
        self.charge = charge
        self.credits = credits
        self.record = record
        self.metrics = metrics
        self.provider = provider
    }

    /// Gives the whole hold back once: the release rules found the provider never billed the call.
    func releaseWhole() {
        let first = state.withLock { state -> Bool in
            defer { state.released = true }
            return !state.released && !state.settled
        }
        if first, let charge, let credits { credits.release(charge) }
    }

    /// The upstream's head: a 2xx answer is read for usage, as server-sent events when it is
    /// `text/event-stream`.
    func head(status: Int, headers: [(String, String)]) {
        let contentType = headers.first { HTTPBytes.equalsIgnoringCase($0.0, staticLowercased: "content-type") }?.1 ?? ""
        let events = contentType.lowercased().hasPrefix("text/event-stream")
        state.withLock {
            $0.status = status
            if (200..<300).contains(status) { $0.scanner = UsageScanner(format: rule.format, serverSentEvents: events) }
        }
    }

    /// Reads the next relayed bytes; the record gets the figures once they are complete, so the
    /// access-log line carries them however the request finishes.
    func observe(_ chunk: UnsafeRawBufferPointer) {
        let complete = state.withLock { state -> UsageScanner.Usage? in
            guard state.scanner != nil else { return nil }
            state.scanner!.scan(chunk)
            let usage = state.scanner!.usage
            guard usage.input != nil, usage.output != nil, usage != state.recorded else { return nil }
            state.recorded = usage
            return usage
        }
        if let complete {
            record.update {
                $0.inputTokens = complete.input
                $0.outputTokens = complete.output
            }
        }
    }

    /// The transfer ended (`whole`: without error): settles the hold, once.
    func complete(whole: Bool) {
        let (usage, released, first) = state.withLock { state -> (UsageScanner.Usage?, Bool, Bool) in
            defer { state.settled = true }
            let usage = whole && (200..<300).contains(state.status) ? state.scanner?.usage : nil
            return (usage, state.released, !state.settled)
        }
        guard first else { return }
        let labels = Self.labels(for: provider)
        if released { return outcome(labels.released) }
        guard let usage, let input = usage.input, let output = usage.output else { return outcome(labels.noUsage) }
        metrics.increment("keyward_metered_tokens_total", labelText: labels.input, by: Int64(input))
        metrics.increment("keyward_metered_tokens_total", labelText: labels.output, by: Int64(output))
        let due = rule.credits(input: input, output: output)
        guard due <= hold else { return outcome(labels.overHold) }
        outcome(labels.settled)
        if due < hold, let charge, let credits { credits.release(charge, part: hold - due) }
    }

    private func outcome(_ labelText: String) {
        metrics.increment("keyward_metered_calls_total", labelText: labelText, by: 1)
    }

    /// The label text of one provider's metered counters (`keyward_metered_tokens_total{provider,kind}`,
    /// `keyward_metered_calls_total{provider,outcome}`), made once per provider name: a settle
    /// moves three of them, and building their text was most of its bookkeeping.
    private struct Labels: Sendable {
        let input, output, settled, noUsage, overHold, released: String

        init(provider: String) {
            input = Metrics.labelText(["provider": provider, "kind": "input"])
            output = Metrics.labelText(["provider": provider, "kind": "output"])
            settled = Metrics.labelText(["provider": provider, "outcome": "settled"])
            noUsage = Metrics.labelText(["provider": provider, "outcome": "no_usage"])
            overHold = Metrics.labelText(["provider": provider, "outcome": "over_hold"])
            released = Metrics.labelText(["provider": provider, "outcome": "released"])
        }
    }

    /// Per provider name; as many entries as names the configuration ever had.
    private static let labelCache = Mutex<[String: Labels]>([:])

    private static func labels(for provider: String) -> Labels {
        labelCache.withLock { cache in
            if let found = cache[provider] { return found }
            let made = Labels(provider: provider)
            cache[provider] = made
            return made
        }
    }
}
