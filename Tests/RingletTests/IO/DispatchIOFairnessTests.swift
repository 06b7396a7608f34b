// A stream that never runs dry (/dev/zero) read with a small high water: its handler
// runs once per piece, and the deliveries must still leave room for the other items
// of the handler's queue, and for `close(flags: .stop)` to end the read. One delivery
// looped while the manager kept the pending bytes topped up: a plain item on the
// queue waited for ever, and so did the stop.

import CRinglet
import CRingletTestSupport
import Glibc
import Testing
@testable import Ringlet

@Suite struct DispatchIOFairnessTests {
    @Test func aFastStreamLeavesItsQueueToOtherItemsOnIoUring() async {
        await #expect(processExitsWith: .success) { DispatchIOFairnessScenarios.zeroStream(.auto) }
    }

    @Test func aFastStreamLeavesItsQueueToOtherItemsOnEpoll() async {
        await #expect(processExitsWith: .success) { DispatchIOFairnessScenarios.zeroStream(.epoll) }
    }
}

enum DispatchIOFairnessScenarios {
    static func zeroStream(_ backend: RuntimeConfiguration.BackendChoice) {
        startRuntime(RuntimeConfiguration(cores: 2, backend: backend))
        for highWater in [1, 64, 4096] {
            let fd = open("/dev/zero", O_RDONLY)
            guard fd >= 0 else { Issue.record("open /dev/zero: errno \(errno)"); return }
            let queue = DispatchQueue(label: "test.io.zero.\(highWater)")
            let cleaned = DispatchSemaphore(value: 0)
            let channel = DispatchIO(type: .stream, fileDescriptor: fd, queue: queue) { _ in
                close(fd)
                cleaned.signal()
            }
            channel.setLimit(highWater: highWater)
            let bytes = AtomicCounter()
            let ended = DispatchSemaphore(value: 0)
            channel.read(offset: 0, length: Int.max, queue: queue) { done, data, _ in
                if let data { bytes.increment(by: data.count) }
                if done { ended.signal() }
            }
            #expect(eventually { bytes.value > 10 * highWater }, "high water \(highWater): no bytes")
            // A plain item behind the deliveries runs.
            let ran = DispatchSemaphore(value: 0)
            queue.async { ran.signal() }
            #expect(waited(ran), "high water \(highWater): a plain item on the handler's queue did not run")
            channel.close(flags: .stop)
            #expect(waited(ended), "high water \(highWater): the stopped read did not end")
            #expect(waited(cleaned), "high water \(highWater): the channel was not cleaned up")
        }
    }
}
