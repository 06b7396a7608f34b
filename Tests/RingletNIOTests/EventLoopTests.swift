#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore
import Testing
@_spi(RingletNet) import Ringlet
@testable import RingletNIO

/// RingletEventLoop as NIO's EventLoop: tasks in order on the loop, timers never early,
/// cancellation, the executor, shutdown.
@Suite struct EventLoopTests {
    @Test func tasksRunOnTheLoopInOrder() throws {
        let loop = testGroup.nextLoop()
        #expect(!loop.inEventLoop)
        let seen = Locked<[Int]>([])
        let inLoop = Locked<[Bool]>([])
        let futures = (0..<200).map { index in
            loop.submit {
                seen.withLock { $0.append(index) }
                inLoop.withLock { $0.append(loop.inEventLoop) }
            }
        }
        try bounded(EventLoopFuture.andAllSucceed(futures, on: loop), "200 submitted tasks")
        #expect(seen.withLock { $0 } == Array(0..<200))
        #expect(inLoop.withLock { $0 }.allSatisfy { $0 })
        // Another loop of the group is not this one.
        let other = testGroup.loops.first { $0 !== loop }!
        #expect(try bounded(other.submit { loop.inEventLoop }, "a task on the other loop") == false)
    }

    @Test func aScheduledTaskRunsNoEarlierThanItsDeadline() throws {
        let loop = testGroup.nextLoop()
        let deadline = NIODeadline.now() + .milliseconds(30)
        let ranAt = try bounded(loop.scheduleTask(deadline: deadline) { NIODeadline.now() }.futureResult, "a task in 30 ms")
        #expect(ranAt >= deadline)
        let inLoop = try bounded(loop.scheduleTask(in: .milliseconds(1)) { loop.inEventLoop }.futureResult, "a task in 1 ms")
        #expect(inLoop)
    }

    @Test func aCancelledTaskNeverRunsAndItsFutureSaysCancelled() throws {
        let loop = testGroup.nextLoop()
        let ran = Locked(false)
        let scheduled = loop.scheduleTask(in: .milliseconds(20)) { ran.withLock { $0 = true } }
        scheduled.cancel()
        #expect(throws: EventLoopError.cancelled) { try bounded(scheduled.futureResult, "the cancelled task") }
        // A later task on the same loop proves the window passed without the first running.
        try bounded(loop.scheduleTask(in: .milliseconds(40)) {}.futureResult, "a task after the window")
        #expect(ran.withLock { $0 } == false)
    }

    @Test func aThrowingTaskFailsItsFuture() throws {
        struct Failure: Error {}
        let loop = testGroup.nextLoop()
        #expect(throws: Failure.self) { try bounded(loop.submit { throw Failure() }, "a throwing task") }
        #expect(throws: Failure.self) {
            try bounded(loop.scheduleTask(in: .milliseconds(1)) { throw Failure() }.futureResult, "a throwing timer")
        }
    }

    @Test func theLoopIsTheSerialExecutorOfATaskThatAsksForIt() async throws {
        let loop = testGroup.nextLoop()
        actor OnTheLoop {
            let loop: RingletEventLoop
            nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
            init(loop: RingletEventLoop) { self.loop = loop }
            func check() -> Bool { loop.inEventLoop }
        }
        #expect(await OnTheLoop(loop: loop).check())
    }

    @Test func aGroupShutdownClosesItsChannelsAndRefusesNewTimers() throws {
        let group = RingletEventLoopGroup(loopCount: 2)
        let server = try startEchoServer(group: group)
        let collector = Collector()
        let client = try connectClient(to: server, collector: collector, group: group)
        #expect(group.openChannelCount >= 2)
        try group.syncShutdownGracefully()
        try bounded(client.closeFuture, "the client's close")
        try bounded(server.closeFuture, "the server's close")
        #expect(group.openChannelCount == 0)
        #expect(throws: EventLoopError.shutdown) {
            try bounded(group.next().scheduleTask(in: .milliseconds(1)) {}.futureResult, "a timer after shutdown")
        }
        #expect(throws: EventLoopError.shutdown) { try group.syncShutdownGracefully() }
    }

    @Test func aFutureWaitedOnByEveryHighBandWorkerStillCompletes() async {
        // A 2-core pool: 2 high-band workers, 2 reserve. Both high-band workers block in
        // NIO's wait() (a condition variable: the kernel, not a Ringlet wait); the loop
        // that completes the future runs on a reserve worker the cover lets in.
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            do throws(RuntimeError) { try Runtime.start(configuration: RuntimeConfiguration(cores: 2)) } catch {
                Issue.record("Runtime.start: \(error)")
                return
            }
            let group = RingletEventLoopGroup(loopCount: 1)
            let loop = group.nextLoop()
            let promise = loop.makePromise(of: Int.self)
            let waiting = DispatchGroup()
            let started = Locked(0), answered = Locked(0)
            for _ in 0..<2 {
                DispatchQueue.global(qos: .userInitiated).async(group: waiting) {
                    started.withLock { $0 += 1 }
                    if (try? promise.futureResult.wait()) == 42 { answered.withLock { $0 += 1 } }
                }
            }
            #expect(eventually("both waits beginning") { started.withLock { $0 } == 2 })
            loop.execute { promise.succeed(42) }
            #expect(waiting.wait(timeout: .now() + .seconds(20)) == .success)
            #expect(answered.withLock { $0 } == 2)
            #expect(Runtime.statistics.workersCoveredInKernel >= 1)
        }
        if let result, result.exitStatus != .exitCode(0) {
            Issue.record("the child said: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
        }
    }

    @Test func theGroupHandsOutItsLoopsInTurn() {
        let group = RingletEventLoopGroup(loopCount: 3, qos: .utility)
        let handed = (0..<6).map { _ in ObjectIdentifier(group.next()) }
        #expect(Set(handed).count == 3)
        #expect(handed[0] == handed[3])
        #expect(group.loops.allSatisfy { $0.queue.qos.qosClass == .utility })
        #expect(RingletEventLoopGroup(loopCount: 0).loops.count == 1)
    }
}
#endif
