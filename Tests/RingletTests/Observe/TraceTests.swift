import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

/// The trace timeline (Observing, "The trace timeline"): a known workload traced to a
/// file gives exactly its items (queue, QoS) and timer firings, the manager's timer
/// windows, the read source's event, the task's jobs and a named lane per thread; a ring smaller than
/// the events keeps the newest and the file counts the rest; tracing off records
/// nothing; the file is written at exit. Each case runs in a child process with its
/// own configuration.
@Suite(.enabled(if: RingAvailability.works, "io_uring is refused here"))
struct TraceTests {
    /// The trace of a child whose parent is the calling process (the child names it
    /// with `getppid()`), so parallel tests and runs never share a file.
    static func childPath(_ name: String, parent: Int32) -> String { "/tmp/ringlet-trace-\(name)-\(parent).json" }

    @Test func aKnownWorkloadGivesItsItemsTimerWindowsSourceEventJobsAndLanes() async {
        await #expect(processExitsWith: .success) {
            let path = TraceTests.childPath("workload", parent: getppid())
            var configuration = twoCoreConfiguration()
            configuration.trace = path
            await ConcurrencyChild.run(configuration) {
                guard Runtime.current.isTracing else { return "the runtime does not trace" }
                // A serial queue with 5 items at each of two QoS.
                let queue = DispatchQueue(label: "test.trace.serial")
                let items = DispatchGroup()
                for index in 0..<10 {
                    queue.async(group: items, qos: index % 2 == 0 ? .userInitiated : .utility) {}
                }
                guard waited(items) else { return "the serial items did not run" }
                // A timer source firing 3 times: a one-shot schedule, set again from
                // the test after each firing, so that no firing can race a cancel.
                let timerQueue = DispatchQueue(label: "test.trace.timer")
                let timer = DispatchSource.makeTimerSource(queue: timerQueue)
                let fired = DispatchSemaphore(value: 0)
                timer.setEventHandler { fired.signal() }
                timer.schedule(deadline: .now() + .milliseconds(5), leeway: .milliseconds(1))
                timer.activate()
                for round in 1...3 {
                    guard waited(fired) else { return "the timer's firing \(round) did not come" }
                    if round < 3 { timer.schedule(deadline: .now() + .milliseconds(5), leeway: .milliseconds(1)) }
                }
                timer.cancel()
                // A read source with one event.
                let pipe = TestPipe()
                let sourceQueue = DispatchQueue(label: "test.trace.read")
                let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: sourceQueue)
                let read = DispatchSemaphore(value: 0)
                source.setEventHandler {
                    pipe.read(100)
                    read.signal()
                }
                source.activate()
                pipe.write(10)
                guard waited(read) else { return "the read source's handler did not run" }
                source.cancel()
                settle(sourceQueue)
                settle(timerQueue)
                // A task's job.
                let value = await Task { 42 }.value
                guard value == 42 else { return "the task answered \(value)" }
                do throws(Errno) {
                    try Runtime.current.writeTrace()
                } catch {
                    return "writeTrace failed: \(error.name)"
                }
                rl_close(pipe.readEnd)
                rl_close(pipe.writeEnd)
                guard let trace = TraceFileSummary(path: path) else { return "\(path) does not parse as JSON" }
                unlink(path)
                return TraceTests.check(workload: trace, readFD: Int(pipe.readEnd))
            }
        }
        unlink(TraceTests.childPath("workload", parent: getpid()))  // written again at the child's exit
    }

    /// What `aKnownWorkload...` expects of its file (nil: all of it holds).
    static func check(workload trace: TraceFileSummary, readFD: Int) -> String? {
        let serial = trace.finishedItems.filter { $0.queue == "test.trace.serial" }
        if serial.count != 10 { return "\(serial.count) serial items started and finished, not 10: \(serial)" }
        let high = serial.filter { $0.qos == "userInitiated" }.count, low = serial.filter { $0.qos == "utility" }.count
        if high != 5 || low != 5 { return "serial items by QoS: \(high) userInitiated, \(low) utility, not 5 and 5" }
        let started = trace.events(phase: "B").filter { trace.argument($0, "queue") as? String == "test.trace.serial" }
        if started.count != 10 { return "\(started.count) starts of serial items, not 10" }
        let queued = trace.events(phase: "i", name: "enqueue").filter {
            trace.argument($0, "queue") as? String == "test.trace.serial"
        }
        if queued.count != 10 { return "\(queued.count) serial items enqueued, not 10" }
        // The timer source's windows and firings are on the lane of the high-band worker
        // that fired them, or the manager's when it fired for the band (Architecture,
        // "Timers kept by their band"); so is the read event ("Descriptors watched by
        // their band").
        let names = trace.laneNames
        guard let manager = names.first(where: { $0.value == "manager" })?.key else { return "no manager lane: \(names)" }
        let firingLanes = Set(names.filter { $0.value.hasSuffix("(high)") }.map(\.key) + [manager])
        let windows = trace.events(phase: "i", name: "timer window").filter { firingLanes.contains($0["tid"] as? Int ?? -1) }
        if windows.count < 3 || windows.contains(where: { (trace.argument($0, "timers") as? Int ?? 0) < 1 }) {
            return "\(windows.count) timer windows on the high-band workers' and the manager's lanes (at least 3, "
                + "each firing a timer)"
        }
        let timerFirings = trace.events(phase: "i", name: "source event").filter {
            firingLanes.contains($0["tid"] as? Int ?? -1) && trace.argument($0, "kind") as? String == "timer"
        }
        if timerFirings.count != 3 { return "\(timerFirings.count) timer-source firings, not 3" }
        let sourceEvents = trace.events(phase: "i", name: "source event").filter {
            firingLanes.contains($0["tid"] as? Int ?? -1)
        }
        let reads = sourceEvents.filter {
            trace.argument($0, "kind") as? String == "read" && trace.argument($0, "fd") as? Int == readFD
        }
        // One write, one event, unless the kernel reported the readiness twice.
        if reads.isEmpty { return "no read event on fd \(readFD)" }
        let handlers = trace.finishedItems.filter { $0.queue == "test.trace.timer" || $0.queue == "test.trace.read" }
        if handlers.count < 4 { return "\(handlers.count) source handlers ran, at least 4 (3 timer, 1 read)" }
        if !trace.finishedItems.contains(where: { $0.category == "job" }) { return "no Swift concurrency job finished" }
        // Every pool thread and the manager are named lanes.
        let expected = ["manager", "worker 0 (high)", "worker 1 (high)", "worker 2 (utility)", "worker 3 (background)",
                        "worker 4 (reserve)", "worker 5 (reserve)"]
        for lane in expected where !names.values.contains(lane) { return "no lane named '\(lane)': \(names)" }
        if trace.droppedEvents != 0 { return "\(trace.droppedEvents) events dropped from rings of 16384" }
        return nil
    }

    /// A ring smaller than what its thread records keeps the newest events, and the
    /// file says how many were dropped.
    @Test func aFullRingKeepsTheNewestEventsAndCountsTheDropped() async {
        await #expect(processExitsWith: .success) {
            let path = TraceTests.childPath("small", parent: getppid())
            var configuration = twoCoreConfiguration()
            configuration.trace = path
            configuration.traceEvents = 64
            startRuntime(configuration)
            let old = DispatchQueue(label: "test.trace.old"), new = DispatchQueue(label: "test.trace.new")
            let group = DispatchGroup()
            // This thread records only enqueues: 300, then 10.
            for _ in 0..<300 { old.async(group: group) {} }
            #expect(waited(group))
            for _ in 0..<10 { new.async(group: group) {} }
            #expect(waited(group))
            #expect(throws: Never.self) { try Runtime.current.writeTrace() }
            let recordedSince = Runtime.statistics.traceEventsRecorded
            guard let trace = TraceFileSummary(path: path) else {
                Issue.record("\(path) does not parse")
                return
            }
            unlink(path)
            let queued = trace.events(phase: "i", name: "enqueue")
            guard let submitter = queued.first(where: { trace.argument($0, "queue") as? String == "test.trace.new" })?["tid"]
                    as? Int else {
                Issue.record("no enqueue of test.trace.new kept")
                return
            }
            let mine = queued.filter { $0["tid"] as? Int == submitter }
            #expect(trace.eventsPerLane[submitter] == 64, "the submitter's ring holds 64 events")
            #expect(mine.filter { trace.argument($0, "queue") as? String == "test.trace.new" }.count == 10)
            #expect(mine.filter { trace.argument($0, "queue") as? String == "test.trace.old" }.count == 54,
                    "the newest 54 of the 300 older enqueues")
            #expect(trace.droppedEvents >= 310 - 64, "dropped \(trace.droppedEvents)")
            let kept = trace.events.filter { $0["ph"] as? String != "M" }.count
            #expect(trace.recordedEvents == kept + trace.droppedEvents)
            #expect(recordedSince >= trace.recordedEvents)
            #expect(trace.eventsPerLane.values.allSatisfy { $0 <= 64 }, "\(trace.eventsPerLane)")
        }
        unlink(TraceTests.childPath("small", parent: getpid()))  // written again at the child's exit
    }

    /// Off (the default), no thread has a ring and nothing is recorded.
    @Test func tracingOffRecordsNothing() async {
        await #expect(processExitsWith: .success) {
            unsetenv("RINGLET_TRACE")
            startRuntime(twoCoreConfiguration())
            let queue = DispatchQueue(label: "test.trace.off")
            let group = DispatchGroup()
            for _ in 0..<100 { queue.async(group: group) {} }
            #expect(waited(group))
            settle(queue)
            #expect(!Runtime.current.isTracing)
            #expect(Runtime.statistics.traceEventsRecorded == 0)
            #expect(ThreadContext.current.trace == nil)
            #expect(queue.sync { ThreadContext.current.trace == nil })
            #expect(onManager { ThreadContext.current.trace == nil } == true)
            #expect(TraceRecorder.shared.lanes.isEmpty)
        }
    }

    /// RINGLET_TRACE names the file, which is written when the process exits.
    @Test func theFileIsWrittenAtExitWhereRingletTraceSays() async {
        let path = TraceTests.childPath("atexit", parent: getpid())
        unlink(path)
        await #expect(processExitsWith: .success) {
            setenv("RINGLET_TRACE", TraceTests.childPath("atexit", parent: getppid()), 1)
            startRuntime(twoCoreConfiguration())
            let queue = DispatchQueue(label: "test.trace.atexit")
            let group = DispatchGroup()
            for _ in 0..<7 { queue.async(group: group) {} }
            _ = waited(group)
            Runtime.exit(status: Runtime.current.isTracing ? 0 : 3)
        }
        let trace = TraceFileSummary(path: path)
        unlink(path)
        #expect(trace != nil, "no trace file at \(path)")
        #expect(trace?.finishedItems.filter { $0.queue == "test.trace.atexit" }.count == 7)
    }
}
