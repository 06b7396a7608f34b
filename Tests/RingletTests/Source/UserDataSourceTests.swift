import Testing
@testable import Ringlet

/// User-data sources: merged on the posting thread, no manager hop.
@Suite struct UserDataSourceTests {
    @Test func addSumsEverythingPosted() {
        let queue = DispatchQueue(label: "test.data.add")
        let source = DispatchSource.makeUserDataAddSource(queue: queue)
        let total = AtomicCounter()
        source.setEventHandler { total.increment(by: Int(source.data)) }
        source.activate()
        nonisolated(unsafe) let adding = source  // Dispatch's sources are not Sendable
        DispatchQueue.concurrentPerform(iterations: 1_000) { _ in adding.add(data: 3) }
        #expect(eventually { total.value == 3_000 })
        source.cancel()
    }

    @Test func eventsWhileSuspendedCoalesce() {
        let queue = DispatchQueue(label: "test.data.coalesce")
        let source = DispatchSource.makeUserDataAddSource(queue: queue)
        let seen = Recorder<UInt>()
        source.setEventHandler { seen.append(source.data) }
        source.activate()
        source.suspend()
        for _ in 0..<10 { source.add(data: 1) }
        settle(queue)  // a delivery that could run has run
        #expect(seen.count == 0)
        source.resume()
        #expect(eventually { seen.count == 1 })
        #expect(seen.values == [10])
        source.cancel()
    }

    @Test func orMergesBits() {
        let source = DispatchSource.makeUserDataOrSource(queue: DispatchQueue(label: "test.data.or"))
        let seen = Recorder<UInt>()
        source.setEventHandler { seen.append(source.data) }
        source.suspend()
        source.activate()
        source.or(data: 0b001)
        source.or(data: 0b100)
        source.or(data: 0)
        source.resume()
        #expect(eventually { seen.count == 1 })
        #expect(seen.values == [0b101])
        source.cancel()
    }

    @Test func replaceKeepsTheLastValueAndZeroIsNoEvent() {
        let queue = DispatchQueue(label: "test.data.replace")
        let source = DispatchSource.makeUserDataReplaceSource(queue: queue)
        let seen = Recorder<UInt>()
        source.setEventHandler { seen.append(source.data) }
        source.activate()
        source.suspend()
        source.replace(data: 7)
        source.replace(data: 9)
        source.resume()
        #expect(eventually { seen.count == 1 })
        #expect(seen.values == [9])
        source.replace(data: 0)
        settle(queue)
        #expect(seen.values == [9])
        source.cancel()
    }

    @Test func inactiveSourceDeliversNothingUntilActivated() {
        let queue = DispatchQueue(label: "test.data.inactive")
        let source = DispatchSource.makeUserDataAddSource(queue: queue)
        let seen = Recorder<UInt>()
        source.setEventHandler { seen.append(source.data) }
        source.add(data: 5)
        settle(queue)
        #expect(seen.count == 0)
        source.resume()  // resume() activates, as in GCD
        source.add(data: 1)
        #expect(eventually { seen.values.reduce(0, +) == 6 })
        source.cancel()
    }

    @Test func noEventHandlerRunsAfterCancel() {
        let queue = DispatchQueue(label: "test.data.cancel")
        let source = DispatchSource.makeUserDataAddSource(queue: queue)
        let afterCancel = AtomicCounter()
        let cancelled = DispatchSemaphore(value: 0)
        let cancelledFlag = AtomicCounter()
        source.setEventHandler { if cancelledFlag.value > 0 { afterCancel.increment() } }
        source.setCancelHandler { cancelled.signal() }
        source.activate()
        for _ in 0..<100 { source.add(data: 1) }
        source.cancel()
        cancelledFlag.increment()
        for _ in 0..<100 { source.add(data: 1) }
        #expect(waited(cancelled))
        settle(queue)
        #expect(afterCancel.value == 0)
    }

    @Test func cancelBeforeActivationRunsTheCancelHandlerOnActivation() {
        let queue = DispatchQueue(label: "test.data.early-cancel")
        let source = DispatchSource.makeUserDataAddSource(queue: queue)
        let cancelled = DispatchSemaphore(value: 0)
        source.setCancelHandler { cancelled.signal() }
        source.cancel()
        settle(queue)
        #expect(cancelled.wait(timeout: .now()) == .timedOut)
        source.activate()
        #expect(waited(cancelled))
    }

    @Test func workItemHandlersRun() {
        let source = DispatchSource.makeUserDataAddSource(queue: DispatchQueue(label: "test.data.item"))
        let ran = DispatchSemaphore(value: 0)
        source.setEventHandler(handler: DispatchWorkItem { ran.signal() })
        source.activate()
        source.add(data: 1)
        #expect(waited(ran))
        source.cancel()
    }

    @Test func handlersRunOnTheTargetQueue() {
        let first = DispatchQueue(label: "test.data.first")
        let second = DispatchQueue(label: "test.data.second")
        let key = DispatchSpecificKey<String>()
        second.setSpecific(key: key, value: "second")
        let source = DispatchSource.makeUserDataAddSource(queue: first)
        let seen = Recorder<String?>()
        source.setEventHandler { seen.append(DispatchQueue.getSpecific(key: key)) }
        source.setTarget(queue: second)
        source.activate()
        source.add(data: 1)
        #expect(eventually { seen.count == 1 })
        #expect(seen.values == ["second"])
        source.cancel()
    }
}
