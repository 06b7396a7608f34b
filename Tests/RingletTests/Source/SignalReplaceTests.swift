// A signal source replaced under a storm of its signal: while any source for the
// signal exists or one is being replaced (cancelled, then made again), a signal is
// counted, never fatal; once the last is cancelled, the signal's disposition and the
// thread's mask are the program's again. Each case runs in a child process: a
// signal meeting SIGUSR1's default disposition ends it.

import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

@Suite struct SignalReplaceTests {
    @Test func replacingASource200TimesUnderASignalStormNeverEndsTheProcess() async {
        await #expect(processExitsWith: .success) { SignalReplaceScenarios.replaceUnderStorm(rounds: 200) }
    }

    @Test func afterTheLastSourceTheProgramsDispositionAndMaskAreBack() async {
        await #expect(processExitsWith: .success) { SignalReplaceScenarios.dispositionComesBack() }
    }

    /// The check above would pass with a handler that never left: the signal, sent
    /// once the disposition is back, must end the child as SIGUSR1's default does.
    @Test func aSignalAfterTheLastSourceMeetsTheProgramsDefault() async {
        await #expect(processExitsWith: .signal(SIGUSR1)) { SignalReplaceScenarios.signalAfterTheLast() }
    }
}

enum SignalReplaceScenarios {
    static let sigusr1: Int32 = 10

    /// True when SIGUSR1's disposition is SIG_DFL.
    static var dispositionIsDefault: Bool {
        var current = sigaction()
        guard sigaction(sigusr1, nil, &current) == 0 else { return false }
        return current.sa_flags & SA_SIGINFO == 0 && current.__sigaction_handler.sa_handler == nil
    }

    /// Whether the calling thread blocks SIGUSR1.
    static var blocked: Bool {
        var set = sigset_t()
        _ = pthread_sigmask(SIG_BLOCK, nil, &set)
        return sigismember(&set, sigusr1) == 1
    }

    /// A signal source for SIGUSR1 adding what it sees to `total`, registered.
    static func makeSource(_ queue: DispatchQueue, total: AtomicCounter) -> DispatchSourceSignal? {
        let source = DispatchSource.makeSignalSource(signal: sigusr1, queue: queue)
        source.setEventHandler { total.increment(by: Int(source.data)) }
        let registered = DispatchSemaphore(value: 0)
        source.setRegistrationHandler { registered.signal() }
        source.activate()
        return waited(registered) ? source : nil
    }

    /// A thread of its own sends SIGUSR1 to the process until `stop` counts one; the
    /// returned group is left when it has stopped.
    static func storm(until stop: AtomicCounter, sent: AtomicCounter) -> DispatchGroup {
        onOwnThreads(1) { _ in
            while stop.value == 0 {
                _ = rl_signal_send(sigusr1)
                sent.increment()
                rl_sleep_ns(20_000)
            }
        }
    }

    static func replaceUnderStorm(rounds: Int) {
        startRuntime(twoCoreConfiguration())
        let queue = DispatchQueue(label: "test.signal.replace")
        let total = AtomicCounter()
        guard var source = makeSource(queue, total: total) else { return }
        let stop = AtomicCounter()
        let sent = AtomicCounter()
        let stopped = storm(until: stop, sent: sent)
        #expect(eventually { sent.value > 10 })
        for _ in 0..<rounds {
            // The replacement as a program writes it: the old one goes first.
            source.cancel()
            source = DispatchSource.makeSignalSource(signal: sigusr1, queue: queue)
            let replacement = source
            source.setEventHandler { total.increment(by: Int(replacement.data)) }
            source.activate()
        }
        // The last source still counts the storm.
        let seen = total.value
        #expect(eventually { total.value > seen })
        stop.increment()
        #expect(waited(stopped))
        source.cancel()
    }

    static func dispositionComesBack() {
        startRuntime(twoCoreConfiguration())
        let maskBefore = blocked
        #expect(dispositionIsDefault)
        let total = AtomicCounter()
        guard let source = makeSource(DispatchQueue(label: "test.signal.back"), total: total) else { return }
        #expect(!dispositionIsDefault)
        #expect(rl_signal_send(sigusr1) == 0)
        #expect(eventually { total.value == 1 })
        source.cancel()
        #expect(eventually { dispositionIsDefault })
        #expect(blocked == maskBefore)
    }

    static func signalAfterTheLast() {
        startRuntime(twoCoreConfiguration())
        let total = AtomicCounter()
        guard let source = makeSource(DispatchQueue(label: "test.signal.after"), total: total) else { return }
        source.cancel()
        guard eventually({ dispositionIsDefault }) else { return }
        _ = rl_signal_send(sigusr1)
        // Not reached: the signal ends the process.
        sleepMilliseconds(5_000)
    }
}
