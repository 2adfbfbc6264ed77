import Dispatch
import Synchronization

/// Runs `action` every interval on its own serial queue, from `start()` until `stop()`.
final class RepeatingTimer: Sendable {
    private let queue: DispatchQueue
    private let milliseconds: Int
    private let action: @Sendable () -> Void
    /// Bumped by `stop()`: a tick scheduled by an earlier `start()` sees a newer value and ends.
    private let generation = Atomic<Int>(0)

    convenience init(label: String, seconds: Int, action: @escaping @Sendable () -> Void) {
        self.init(label: label, milliseconds: seconds * 1000, action: action)
    }

    init(label: String, milliseconds: Int, action: @escaping @Sendable () -> Void) {
        queue = DispatchQueue(label: label)
        self.milliseconds = max(1, milliseconds)
        self.action = action
    }

    func start() {
        schedule(generation.load(ordering: .acquiring))
    }

    func stop() {
        generation.add(1, ordering: .releasing)
    }

    private func schedule(_ current: Int) {
        queue.asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [weak self] in
            guard let self, self.generation.load(ordering: .acquiring) == current else { return }
            self.action()
            self.schedule(current)
        }
    }
}
