import CRinglet
import Synchronization

/// The OS side of the main queue inside another loop (Queues/MainQueue+OtherLoops.swift):
/// the eventfd that loop polls, made on first use, and the one call into
/// RingletFoundationCompat's run-loop bridge (ringlet_run_loop.c). Any thread.
final class MainQueueReadiness: Sendable {
    private let descriptor = Atomic<Int32>(-1)
    private let bridgeAsked = Atomic<Bool>(false)

    /// The descriptor, made by the first call; `made` says this call made it.
    func open() throws(Errno) -> (fd: Int32, made: Bool) {
        let existing = descriptor.load(ordering: .acquiring)
        if existing >= 0 { return (existing, false) }
        let eventFD = try EventFD()
        let (won, winner) = descriptor.compareExchange(expected: -1, desired: eventFD.fd, ordering: .acquiringAndReleasing)
        if won { return (eventFD.fd, true) }
        eventFD.close()
        return (winner, false)
    }

    /// Makes the descriptor readable; nothing before it exists. A write it refuses (the
    /// program closed it, which its documentation forbids) is left unreported: the main
    /// queue's own drains do not depend on it.
    func post() {
        let fd = descriptor.load(ordering: .acquiring)
        if fd >= 0 { _ = rl_eventfd_signal(fd) }
    }

    /// Takes the descriptor's readiness.
    func take() {
        let fd = descriptor.load(ordering: .acquiring)
        if fd >= 0 { _ = rl_eventfd_drain(fd) }
    }

    /// Starts RingletFoundationCompat's run-loop bridge, when the program links it, the
    /// first time it is called; later calls cost one relaxed load.
    func startRunLoopBridgeOnce() {
        if bridgeAsked.load(ordering: .relaxed) || bridgeAsked.exchange(true, ordering: .relaxed) { return }
        _ = rl_run_loop_bridge_start()
    }
}
