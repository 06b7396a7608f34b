import Glibc
import Testing
@_spi(RingletNet) @testable import Ringlet

/// The process clamp and boosts (QoS/Importance.swift), without the service library.
@Suite struct ImportanceTests {
    /// Hops saturate at 127, below the boost bit, and every hop keeps the mark.
    @Test func hopsSaturateBelowTheBoostMark() {
        let crumb = Breadcrumb(origin: 7, activity: 5, hops: 300)
        #expect(crumb.hops == 127)
        #expect(!crumb.isBoosted)
        let next = Breadcrumb(raw: crumb.submitted(fromQueue: 9))
        #expect(next.hops == 127 && !next.isBoosted && next.activity == 5 && next.origin == 9)
        let boosted = Breadcrumb(raw: crumb.raw | Importance.boostBit)
        let hop = Breadcrumb(raw: boosted.submitted(fromQueue: 9))
        #expect(hop.isBoosted && hop.hops == 127 && hop.activity == 5)
        let young = Breadcrumb(raw: Breadcrumb(origin: 7, activity: 5, hops: 1).raw | Importance.boostBit)
        #expect(Breadcrumb(raw: young.submitted(fromQueue: 9)).hops == 2)
    }

    /// Clamped: closures and work items run at most at the clamp; a boost's closures at
    /// their own QoS, and what they submit too unless detached; the references drop to
    /// 0 once the boost has ended and its work has run. The main queue is not clamped.
    @Test func theClampLowersAndABoostLiftsIt() async {
        await #expect(processExitsWith: .success) {
            Runtime.clampWork(to: .background)
            let queue = DispatchQueue(label: "test.importance")
            let seen = DispatchSemaphore(value: 0)
            let levels = LevelLog()
            queue.async(qos: .userInitiated) { levels.add("plain", Runtime.currentQoS); seen.signal() }
            queue.async(execute: DispatchWorkItem(qos: .userInitiated, flags: .enforceQoS) {
                levels.add("item", Runtime.currentQoS)
                seen.signal()
            })
            let boost = Runtime.beginBoost()
            #expect(Runtime.current.statistics.boostReferences == 1)
            boost.submitBoosted {
                queue.async(qos: .userInitiated) {
                    levels.add("boosted", Runtime.currentQoS)
                    queue.async { levels.add("hop", Runtime.currentQoS); seen.signal() }
                    queue.async(flags: .detached) { levels.add("detached", Runtime.currentQoS); seen.signal() }
                    seen.signal()
                }
            }
            boost.end()
            boost.end()
            for _ in 0..<5 { #expect(seen.wait(timeout: .now() + 10) == .success) }
            #expect(levels.qos("plain") == .background)
            #expect(levels.qos("item") == .background)
            #expect(levels.qos("boosted") == .userInitiated)
            #expect(levels.qos("hop") == .userInitiated)
            #expect(levels.qos("detached") == .background)
            let deadline = DispatchTime.now() + 10
            while Runtime.current.statistics.boostReferences != 0 && DispatchTime.now() < deadline { usleep(1000) }
            let statistics = Runtime.current.statistics
            #expect(statistics.boostReferences == 0)
            #expect(statistics.boostsBegun == 1)
            #expect(statistics.itemsClamped == 3)
            #expect(statistics.importanceClamp == .background)
            #expect(DispatchQueue.main.isImportanceExempt)
            Runtime.clampWork(to: nil)
            #expect(Runtime.workClamp == nil)
        }
    }
}

/// What each closure saw, by name.
private final class LevelLog: @unchecked Sendable {
    private let lock = FutexLock()
    private var entries: [(String, DispatchQoS)] = []
    deinit { lock.deallocate() }
    func add(_ name: String, _ qos: DispatchQoS) { lock.withLock { entries.append((name, qos)) } }
    func qos(_ name: String) -> DispatchQoS? { lock.withLock { entries.first { $0.0 == name }?.1 } }
}
