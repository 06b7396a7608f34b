import Glibc
import Ringlet

// `poll-loop`: a main thread that runs its own poll(2) loop instead of dispatchMain()
// serves the main queue through Runtime.mainQueueDescriptor() and drainMainQueue()
// (OtherLoopTests), the shape of the example in the Architecture article:
// - idle, the descriptor stays unreadable through a whole poll timeout;
// - 200 main-queue items and @MainActor jobs sent from the pool, and an asyncAfter
//   onto the main queue, run on the main thread in submission order while the loop
//   also serves a pipe of its own;
// - once all has run, the descriptor is unreadable again through a whole timeout.
enum OtherLoop {
    static func run() -> Never {
        let descriptor: Int32
        do {
            descriptor = try Runtime.mainQueueDescriptor()
        } catch {
            fail("Runtime.mainQueueDescriptor() failed: \(error)")
        }
        do {
            if try Runtime.mainQueueDescriptor() != descriptor { fail("a second call gave another descriptor") }
        } catch {
            fail("the second Runtime.mainQueueDescriptor() failed: \(error)")
        }
        if readable(descriptor, withinMilliseconds: 100) { fail("the descriptor was readable with no work") }

        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { fail("pipe(2) failed") }
        let (pipeRead, pipeWrite) = (pipeEnds[0], pipeEnds[1])
        let log = Log()
        let sent = 200
        DispatchQueue.global().async {
            for index in 0..<sent {
                if index % 2 == 0 {
                    DispatchQueue.main.async { log.append(index, onMain: Runtime.isMainThread) }
                } else {
                    Task { @MainActor in log.append(index, onMain: Runtime.isMainThread) }
                }
                if index == sent / 2 {
                    var byte: UInt8 = 1
                    _ = write(pipeWrite, &byte, 1)
                }
            }
            DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(20)) {
                log.append(sent, onMain: Runtime.isMainThread)
            }
        }

        var pipeBytes = 0
        var mainWakes = 0
        let deadline = DispatchTime.now() + .seconds(20)
        while log.values.count < sent + 1 || pipeBytes == 0 {
            if DispatchTime.now() > deadline {
                fail("after 20 s: \(log.values.count) of \(sent + 1) main-queue items ran, \(pipeBytes) pipe byte(s)")
            }
            var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: pipeRead, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, 1000) >= 0 || errno == EINTR else { fail("poll(2) failed: errno \(errno)") }
            if fds[0].revents & Int16(POLLIN) != 0 {
                mainWakes += 1
                Runtime.drainMainQueue()
            }
            if fds[1].revents & Int16(POLLIN) != 0 {
                var byte: UInt8 = 0
                if read(pipeRead, &byte, 1) == 1 { pipeBytes += 1 }
            }
        }
        if log.offMain > 0 { fail("\(log.offMain) item(s) ran off the main thread") }
        if log.values != Array(0...sent) { fail("the items ran out of order: \(log.values.prefix(20))...") }
        if mainWakes > sent + 1 { fail("the loop woke \(mainWakes) times for \(sent + 1) items") }
        if readable(descriptor, withinMilliseconds: 100) { fail("the descriptor stayed readable with all work done") }
        print("poll-loop: \(sent + 1) items in \(mainWakes) wake(s) of the loop")
        Runtime.exit(status: 0)
    }

    /// Whether `descriptor` becomes readable within the timeout (poll's own timeout is
    /// the proof that the window passed).
    static func readable(_ descriptor: Int32, withinMilliseconds timeout: Int32) -> Bool {
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        while true {
            let ready = poll(&fds, 1, timeout)
            if ready < 0 && errno == EINTR { continue }
            return ready > 0 && fds[0].revents & Int16(POLLIN) != 0
        }
    }
}
