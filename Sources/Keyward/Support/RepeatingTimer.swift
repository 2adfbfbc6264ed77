import Dispatch
import Synchronization

/// Runs `action` every `seconds` on its own serial queue, from `start()` until `stop()`.
final class RepeatingTimer: Sendable {
    private let queue: DispatchQueue
    private let seconds: Int
    private let action: @Sendable () -> Void
    /// Bumped by `stop()`: a tick scheduled by an earlier `start()` sees a newer value and ends.
    private let generation = Atomic<Int>(0)

    init(label: String, seconds: Int, action: @escaping @Sendable () -> Void) {
        queue = DispatchQueue(label: label)
        self.seconds = max(1, seconds)
        self.action = action
    }

    func start() {
        schedule(generation.load(ordering: .acquiring))
    }

    func stop() {
        generation.add(1, ordering: .releasing)
    }

    private func schedule(_ current: Int) {
        queue.asyncAfter(deadline: .now() + .seconds(seconds)) { [weak self] in
            guard let self, self.generation.load(ordering: .acquiring) == current else { return }
            self.action()
            self.schedule(current)
        }
    }
}
