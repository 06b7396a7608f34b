import CRinglet
import CRingletTestSupport
import Ringlet

// Dispatch sources on the real ring: timers, user data, a pipe's EOF, a signal and a
// child's exit. Every wait is bounded by `timeout`.

/// Adds the source checks to `harness`.
func runSourceChecks(_ harness: CheckHarness) {
    harness.run("a repeating timer source fires on its phase, never early") {
        let timer = DispatchSource.makeTimerSource(flags: .strict, queue: DispatchQueue(label: "checks.timer"))
        let start = DispatchTime.now() + .milliseconds(5)
        let fires = SharedCounter(), early = SharedCounter()
        let done = DispatchSemaphore(value: 0)
        timer.setEventHandler {
            // `data` counts the fires this delivery stands for (more than 1 when the
            // handler ran late): the count may step over 20.
            let before = fires.value
            let fired = fires.increment(by: Int(timer.data))
            if DispatchTime.now() < start + .milliseconds(5 * (fired - 1)) { early.increment() }
            if before < 20 && fired >= 20 { done.signal() }
        }
        timer.schedule(deadline: start, repeating: .milliseconds(5), leeway: .milliseconds(1))
        timer.activate()
        let waited = done.wait(timeout: timeout)
        timer.cancel()
        if waited != .success { return "timed out after \(fires.value) fires" }
        return early.value == 0 ? nil : "\(early.value) fires came early"
    }

    harness.run("a user-data source sums every add, and its cancel handler runs once, last") {
        let source = DispatchSource.makeUserDataAddSource(queue: DispatchQueue(label: "checks.data"))
        let total = SharedCounter(), cancels = SharedCounter(), lateEvents = SharedCounter()
        let done = DispatchSemaphore(value: 0)
        source.setEventHandler {
            if cancels.value > 0 { lateEvents.increment() }
            for _ in 0..<Int(source.data) { total.increment() }
        }
        source.setCancelHandler {
            cancels.increment()
            done.signal()
        }
        source.activate()
        // Dispatch's source protocols are not Sendable (nor the toolchain's): the
        // program vouches that adding data from many threads is safe, as it is.
        nonisolated(unsafe) let adding = source
        DispatchQueue.concurrentPerform(iterations: 500) { _ in adding.add(data: 2) }
        let end = timeout
        while total.value < 1000 && DispatchTime.now() < end {
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(1))
        }
        source.cancel()
        if done.wait(timeout: timeout) != .success { return "cancel handler never ran" }
        if total.value != 1000 { return "handlers saw \(total.value) of 1000" }
        return cancels.value == 1 && lateEvents.value == 0 ? nil : "cancel handler ran \(cancels.value) times"
    }

    harness.run("closing a pipe's write end delivers EOF to its read source") {
        var fds: [Int32] = [-1, -1]
        if fds.withUnsafeMutableBufferPointer({ rl_pipe($0.baseAddress, 1) }) != 0 { return "pipe2 failed" }
        let readEnd = fds[0], writeEnd = fds[1]
        let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: DispatchQueue(label: "checks.pipe"))
        let received = SharedCounter()
        let done = DispatchSemaphore(value: 0)
        source.setEventHandler {
            let waiting = Int(source.data)
            if waiting == 0 {
                source.cancel()
                return
            }
            var buffer: [UInt8] = Array(repeating: 0, count: waiting)
            let n = buffer.withUnsafeMutableBytes { rl_fd_read(readEnd, $0.baseAddress, UInt64(waiting)) }
            for _ in 0..<max(Int(n), 0) { received.increment() }
        }
        source.setCancelHandler {
            rl_close(readEnd)
            done.signal()
        }
        source.activate()
        let bytes: [UInt8] = Array(repeating: 1, count: 300)
        _ = bytes.withUnsafeBytes { rl_fd_write(writeEnd, $0.baseAddress, 300) }
        rl_close(writeEnd)
        if done.wait(timeout: timeout) != .success { return "no EOF after \(received.value) bytes" }
        return received.value == 300 ? nil : "read \(received.value) of 300 bytes"
    }

    harness.run("a signal sent three times is counted three times") {
        let sigusr1: Int32 = 10
        let source = DispatchSource.makeSignalSource(signal: sigusr1, queue: DispatchQueue(label: "checks.signal"))
        let count = SharedCounter()
        let registered = DispatchSemaphore(value: 0)
        source.setEventHandler { for _ in 0..<Int(source.data) { count.increment() } }
        source.setRegistrationHandler { registered.signal() }
        source.activate()
        if registered.wait(timeout: timeout) != .success { return "never registered" }
        for round in 1...3 {
            _ = rl_signal_send(sigusr1)
            let end = timeout
            while count.value < round && DispatchTime.now() < end {
                _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(1))
            }
        }
        source.cancel()
        return count.value == 3 ? nil : "counted \(count.value) signals"
    }

    harness.run("a child's exit reaches a process source") {
        let pid = rl_process_spawn_exit(0, 10_000_000)
        if pid <= 0 { return "fork failed" }
        let source = DispatchSource.makeProcessSource(identifier: pid, eventMask: .exit,
                                                      queue: DispatchQueue(label: "checks.process"))
        let exited = DispatchSemaphore(value: 0)
        source.setEventHandler { if source.data.contains(.exit) { exited.signal() } }
        source.activate()
        let result = exited.wait(timeout: timeout)
        source.cancel()
        _ = rl_process_reap(pid)
        return result == .success ? nil : "no exit event"
    }
}
