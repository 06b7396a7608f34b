#if Hummingbird  // the package's Hummingbird trait (Package.swift): without it this module is empty
import Glibc
import Ringlet
import ServiceLifecycle

/// SIGINT and SIGTERM as a graceful shutdown of a `ServiceGroup`, through Ringlet's
/// signal sources (on the manager's signalfd). ServiceLifecycle's own
/// `gracefulShutdownSignals` watch signals with the toolchain's Dispatch, which starts two
/// threads of its own beside Ringlet's fixed set; make the group without them and keep
/// one of these for as long as it runs:
///
///     let services = ServiceGroup(services: [server], logger: logger)
///     let signals = ShutdownSignals(of: services)
///     try await services.run()
///     _ = signals
// @unchecked Sendable: the sources are set once and only cancelled.
public final class ShutdownSignals: @unchecked Sendable {
    private let sources: [DispatchSourceSignal]

    /// Watches `signals` (default SIGTERM and SIGINT, whose default action — ending the
    /// process — they no longer take); the first of them asks `group` to shut down
    /// gracefully, a second one ends the process at once, as ServiceLifecycle's does.
    public init(of group: ServiceGroup, signals: [Int32] = [SIGTERM, SIGINT]) {
        let queue = DispatchQueue(label: "com.ringlet.hummingbird.signals", qos: .userInitiated)
        let received = ShutdownCount()
        sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if received.next() > 1 { exit(128 + number) }
                Task { await group.triggerGracefulShutdown() }
            }
            source.activate()
            return source
        }
    }

    deinit {
        sources.forEach { $0.cancel() }
    }
}

/// How many of the signals came (their handlers run on one serial queue).
private final class ShutdownCount: @unchecked Sendable {
    private var count = 0
    func next() -> Int {
        count += 1
        return count
    }
}
#endif
