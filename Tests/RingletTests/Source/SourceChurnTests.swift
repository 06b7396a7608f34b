// Sources made, activated and cancelled at once, by the thousand: every cancel handler
// runs (the place to close the descriptor), and the manager stays responsive — timers
// and new sources fire afterwards. On io_uring a poll removal that finds the poll in
// the middle of a wake-up is answered EALREADY; asked again at once, before the manager
// has waited (which runs the ring's deferred work), it was answered EALREADY again and
// again: the manager spun, cancel handlers never ran and nothing fired any more.

import CRinglet
import CRingletTestSupport
import Testing
@testable import Ringlet

@Suite struct SourceChurnTests {
    @Test func sourcesCancelledRightAfterActivationAllFinish() async {
        await #expect(processExitsWith: .success) { SourceChurnScenarios.activateThenCancel(sources: 8000) }
    }
}

enum SourceChurnScenarios {
    static func activateThenCancel(sources: Int) {
        startRuntime(twoCoreConfiguration())
        let queue = DispatchQueue(label: "test.churn", attributes: .concurrent)
        let finished = AtomicCounter()
        let delivered = AtomicCounter()
        let batch = 500
        var made = 0
        while made < sources {
            let start = finished.value
            for index in made..<min(made + batch, sources) {
                let pipe = TestPipe()
                let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
                source.setEventHandler {
                    pipe.read(16)
                    delivered.increment()
                }
                source.setCancelHandler {
                    rl_close(pipe.readEnd)
                    rl_close(pipe.writeEnd)
                    finished.increment()
                }
                if index % 3 == 0 { pipe.write(1) }
                source.activate()
                source.cancel()
            }
            let count = min(made + batch, sources) - made
            made += count
            // Each batch's descriptors are closed before the next is made (the test's
            // open-file limit), by the cancel handlers this test is about.
            guard eventually({ finished.value == start + count }) else {
                Issue.record("\(finished.value - start) of \(count) cancel handlers ran in batch ending at \(made)")
                return
            }
        }
        #expect(finished.value == sources)
        // The manager still serves: a timer and a new read source fire.
        let fired = DispatchSemaphore(value: 0)
        queue.asyncAfter(deadline: .now() + .milliseconds(5)) { fired.signal() }
        #expect(waited(fired))
        let pipe = TestPipe()
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
        let read = DispatchSemaphore(value: 0)
        source.setEventHandler {
            pipe.read(16)
            read.signal()
        }
        source.activate()
        pipe.write(1)
        #expect(waited(read))
        source.cancel()
    }
}
