// Which QoS an item runs at: GCD's rules as `resolvePriority` applies them, and the
// QoS items actually observe (`ThreadContext.current.currentPriority`) when submitted
// from threads running at a known QoS.

import Testing
@testable import Ringlet

private func priority(_ qosClass: DispatchQoS.QoSClass, _ relative: Int = 0) -> QoSPriority {
    QoSPriority(DispatchQoS(qosClass: qosClass, relativePriority: relative))
}

/// Runs `body` as an item of `queue` submitted from a thread running at `submitter`
/// (a global queue of that class), and returns what it returned.
private func observe<T>(submitter: DispatchQoS.QoSClass,
                        _ submit: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
                        _ body: @escaping @Sendable () -> T) -> T? {
    let result = Recorder<T>()
    let done = DispatchSemaphore(value: 0)
    DispatchQueue.global(qos: submitter).async {
        submit {
            result.append(body())
            done.signal()
        }
    }
    guard waited(done) else { return nil }
    return result.values.first
}

@Suite struct QoSPropagationTests {
    // MARK: resolvePriority, rule by rule

    let plain = DispatchQueue(label: "test.qos.plain")
    let utility = DispatchQueue(label: "test.qos.utility", qos: .utility)

    @Test func aQueueWithoutQoSTakesTheSubmittersQoS() {
        #expect(plain.resolvePriority(for: priority(.userInitiated), flags: [], itemQoS: .unspecified)
            == priority(.userInitiated))
        #expect(plain.resolvePriority(for: priority(.background), flags: [], itemQoS: .unspecified)
            == priority(.background))
        // Relative priority travels too.
        #expect(plain.resolvePriority(for: priority(.utility, -5), flags: [], itemQoS: .unspecified)
            == priority(.utility, -5))
    }

    @Test func theQueuesOwnQoSWins() {
        for submitter in [priority(.background), priority(.userInitiated), priority(.userInteractive)] {
            #expect(utility.resolvePriority(for: submitter, flags: [], itemQoS: .unspecified) == priority(.utility))
        }
        // ...over an explicit item QoS too, unless the item enforces it.
        #expect(utility.resolvePriority(for: priority(.default), flags: [], itemQoS: .userInitiated)
            == priority(.utility))
        #expect(utility.resolvePriority(for: priority(.default), flags: .inheritQoS, itemQoS: .userInitiated)
            == priority(.utility))
    }

    @Test func anExplicitItemQoSBeatsTheSubmitterOnAQueueWithoutQoS() {
        #expect(plain.resolvePriority(for: priority(.background), flags: [], itemQoS: .userInitiated)
            == priority(.userInitiated))
        #expect(plain.resolvePriority(for: priority(.userInitiated), flags: [],
                                      itemQoS: DispatchQoS(qosClass: .utility, relativePriority: -3))
            == priority(.utility, -3))
    }

    @Test func enforceQoSTakesTheHigherOfItemAndQueue() {
        #expect(utility.resolvePriority(for: priority(.default), flags: .enforceQoS, itemQoS: .userInitiated)
            == priority(.userInitiated))
        #expect(utility.resolvePriority(for: priority(.default), flags: .enforceQoS, itemQoS: .background)
            == priority(.utility))
        // The submitter's QoS counts as the item's when the item names none.
        #expect(utility.resolvePriority(for: priority(.userInitiated), flags: .enforceQoS, itemQoS: .unspecified)
            == priority(.userInitiated))
    }

    @Test func detachedIgnoresTheSubmitter() {
        #expect(plain.resolvePriority(for: priority(.userInitiated), flags: .detached, itemQoS: .unspecified)
            == priority(.default))
        #expect(utility.resolvePriority(for: priority(.userInitiated), flags: .detached, itemQoS: .unspecified)
            == priority(.utility))
        // An explicit item QoS still applies.
        #expect(plain.resolvePriority(for: priority(.userInitiated), flags: .detached, itemQoS: .background)
            == priority(.background))
    }

    @Test func noQoSCarriesNothing() {
        #expect(plain.resolvePriority(for: priority(.userInitiated), flags: .noQoS, itemQoS: .userInteractive)
            == priority(.default))
        #expect(utility.resolvePriority(for: priority(.userInitiated), flags: [.noQoS, .enforceQoS],
                                        itemQoS: .userInteractive) == priority(.utility))
    }

    @Test func unspecifiedEverywhereMeansDefault() {
        #expect(plain.resolvePriority(for: priority(.unspecified), flags: [], itemQoS: .unspecified)
            == priority(.default))
        #expect(DispatchQueue.global().resolvePriority(for: priority(.unspecified), flags: [], itemQoS: .unspecified)
            == priority(.default))
    }

    @Test func globalQueues() {
        // The default global queue lets items keep their QoS; the others impose theirs.
        #expect(DispatchQueue.global().resolvePriority(for: priority(.utility), flags: [], itemQoS: .unspecified)
            == priority(.utility))
        #expect(DispatchQueue.global().resolvePriority(for: priority(.background), flags: [], itemQoS: .userInitiated)
            == priority(.userInitiated))
        #expect(DispatchQueue.global(qos: .background)
            .resolvePriority(for: priority(.userInitiated), flags: [], itemQoS: .unspecified) == priority(.background))
        #expect(DispatchQueue.global(qos: .userInteractive)
            .resolvePriority(for: priority(.unspecified), flags: [], itemQoS: .unspecified)
            == priority(.userInteractive))
    }

    @Test func deprecatedGlobalPrioritiesMapToQoSClasses() {
        #expect(DispatchQueue.global(priority: .high) === DispatchQueue.global(qos: .userInitiated))
        #expect(DispatchQueue.global(priority: .default) === DispatchQueue.global(qos: .default))
        #expect(DispatchQueue.global(priority: .low) === DispatchQueue.global(qos: .utility))
        #expect(DispatchQueue.global(priority: .background) === DispatchQueue.global(qos: .background))
        #expect(DispatchQueue.global(qos: .unspecified) === DispatchQueue.global())
    }

    @Test func theQueueQoSIsInheritedFromTargets() {
        let child = DispatchQueue(label: "test.qos.child", target: utility)
        let grandchild = DispatchQueue(label: "test.qos.grandchild", target: child)
        #expect(grandchild.resolvePriority(for: priority(.userInitiated), flags: [], itemQoS: .unspecified)
            == priority(.utility))
        // setTarget recomputes it.
        let moved = DispatchQueue(label: "test.qos.moved")
        #expect(moved.resolvePriority(for: priority(.userInitiated), flags: [], itemQoS: .unspecified)
            == priority(.userInitiated))
        moved.setTarget(queue: DispatchQueue.global(qos: .background))
        #expect(moved.resolvePriority(for: priority(.userInitiated), flags: [], itemQoS: .unspecified)
            == priority(.background))
    }

    @Test func userInteractiveSubmittersPropagateUserInitiated() {
        let context = ThreadContext(worker: nil)
        context.currentPriority = priority(.userInteractive)
        #expect(context.propagatedPriority == priority(.userInitiated))
        context.currentPriority = priority(.userInteractive, -4)
        #expect(context.propagatedPriority.level == .userInitiated)
        for other in [priority(.unspecified), priority(.background), priority(.utility, -2),
                      priority(.default), priority(.userInitiated, -1)] {
            context.currentPriority = other
            #expect(context.propagatedPriority == other)
        }
    }

    // MARK: What items observe

    @Test func itemsObserveThePropagatedQoS() {
        let plain = self.plain, utility = self.utility
        #expect(observe(submitter: .userInitiated, { plain.async(execute: $0) }) { currentLevel } == .userInitiated)
        #expect(observe(submitter: .utility, { plain.async(execute: $0) }) { currentLevel } == .utility)
        #expect(observe(submitter: .userInteractive, { plain.async(execute: $0) }) { currentLevel }
            == .userInitiated)
        #expect(observe(submitter: .userInitiated, { utility.async(execute: $0) }) { currentLevel } == .utility)
        #expect(observe(submitter: .utility, { plain.async(flags: .detached, execute: $0) }) { currentLevel }
            == .default)
        #expect(observe(submitter: .utility,
                        { utility.async(qos: .userInitiated, flags: .enforceQoS, execute: $0) }) { currentLevel }
            == .userInitiated)
        #expect(observe(submitter: .background, { plain.async(qos: .userInitiated, execute: $0) }) { currentLevel }
            == .userInitiated)
    }

    @Test func globalQueueItemsRunAtTheQueuesQoS() {
        for qosClass in [DispatchQoS.QoSClass.background, .utility, .userInitiated, .userInteractive] {
            let level = observe(submitter: .default, { DispatchQueue.global(qos: qosClass).async(execute: $0) }) {
                currentLevel
            }
            #expect(level == qosClass.level)
        }
        #expect(observe(submitter: .utility, { DispatchQueue.global().async(execute: $0) }) { currentLevel }
            == .utility)
    }

    @Test func relativePriorityReachesTheItem() {
        let queue = DispatchQueue(label: "test.qos.relative", qos: DispatchQoS(qosClass: .userInitiated,
                                                                             relativePriority: -7))
        let seen = observe(submitter: .default, { queue.async(execute: $0) }) { currentQoS }
        #expect(seen == DispatchQoS(qosClass: .userInitiated, relativePriority: -7))
    }

    @Test func syncOnlyRaisesTheCallersQoS() {
        let utility = self.utility
        // A userInitiated caller keeps userInitiated inside a utility queue...
        let high = observe(submitter: .userInitiated, { $0() }) { utility.sync { currentLevel } }
        #expect(high == .userInitiated)
        // ...a background caller is raised to the queue's utility...
        let low = observe(submitter: .background, { $0() }) { utility.sync { currentLevel } }
        #expect(low == .utility)
        // ...and gets its own QoS back afterwards.
        let after = observe(submitter: .background, { $0() }) { () -> QoSLevel in
            utility.sync {}
            return currentLevel
        }
        #expect(after == .background)
    }

    @Test func nestedSubmissionsKeepPropagating() {
        let first = DispatchQueue(label: "test.qos.first")
        let second = DispatchQueue(label: "test.qos.second")
        let level = observe(submitter: .userInitiated, { first.async(execute: $0) }) { () -> QoSLevel? in
            let inner = Recorder<QoSLevel>()
            let done = DispatchSemaphore(value: 0)
            second.async {
                inner.append(currentLevel)
                done.signal()
            }
            return waited(done) ? inner.values.first : nil
        }
        #expect(level == .userInitiated)
    }
}
