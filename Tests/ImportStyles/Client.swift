// One GCD client program, built three times with three ways of importing Ringlet:
//
//   ImportStyleRinglet                 import Ringlet
//   ImportStyleFoundationEssentials    import FoundationEssentials + import Ringlet
//   ImportStyleFoundation              import Foundation + import RingletFoundationCompat
//
// Each style's directory links this file as its main.swift; Package.swift defines the
// condition that picks the imports below. `make import-styles` (part of `make test`)
// builds and runs the three and checks their last line, so a change that breaks one way
// of importing Ringlet — a name that turns ambiguous, an operator that is not found, a
// program that no longer links — fails the build. The PortingFromDispatch article,
// "Foundation in the same file", is the recipe these programs hold to.
//
// Every check prints what failed and exits 1; every wait is bounded, and a watchdog
// ends the program if `dispatchMain()` never gets to the end.

#if IMPORT_STYLE_RINGLET
import Ringlet
let style = "Ringlet"
#elseif IMPORT_STYLE_FOUNDATION_ESSENTIALS
import FoundationEssentials
import Ringlet
let style = "FoundationEssentials"
#elseif IMPORT_STYLE_FOUNDATION
import Foundation
import RingletFoundationCompat
let style = "Foundation"
#endif

nonisolated(unsafe) var checks = 0  // only on the main thread

/// Counts one check; on failure says which and ends the program with status 1.
func check(_ condition: Bool, _ what: String) {
    checks += 1
    if !condition {
        print("import-styles: \(style): FAILED: \(what)")
        Runtime.exit(status: 1)
    }
}

let patience = DispatchTime.now() + .seconds(20)

// 1. Every name the toolchain's Dispatch also declares means Ringlet's here.
func isRinglet(_ type: Any.Type) -> Bool {
    let name = String(reflecting: type)
    return name.hasPrefix("Ringlet.") || name.hasPrefix("any Ringlet.")
}
let sharedNames: [Any.Type] = [
    DispatchQueue.self, DispatchGroup.self, DispatchSemaphore.self, DispatchWorkItem.self,
    DispatchWorkItemFlags.self, DispatchQoS.self, DispatchTime.self, DispatchWallTime.self,
    DispatchTimeInterval.self, DispatchTimeoutResult.self, DispatchSource.self,
    (any DispatchSourceTimer).self, (any DispatchSourceRead).self, DispatchIO.self,
    DispatchData.self, DispatchPredicate.self, DispatchSpecificKey<Int>.self,
]
for type in sharedNames { check(isRinglet(type), "\(String(reflecting: type)) is not Ringlet's") }

// 2. Times, intervals and their operators, values handed between functions.
func deadline(after interval: DispatchTimeInterval, from start: DispatchTime) -> DispatchTime {
    start + interval
}
func nanoseconds(from start: DispatchTime, to end: DispatchTime) -> UInt64 {
    end.uptimeNanoseconds - start.uptimeNanoseconds
}
let start = DispatchTime.now()
let inHalfASecond: DispatchTime = start + 0.5
let inTenMilliseconds = start + .milliseconds(10)
check(start < inTenMilliseconds && inTenMilliseconds < inHalfASecond, "DispatchTime comparisons")
check(inHalfASecond > .now() - 1.0, "DispatchTime - Double against .now()")
check(inTenMilliseconds - .milliseconds(10) == start, "DispatchTime - DispatchTimeInterval")
check(nanoseconds(from: start, to: inHalfASecond) == 500_000_000, "DispatchTime + Double")
let intervals: [DispatchTimeInterval] = [.seconds(2), .milliseconds(10), .microseconds(7), .nanoseconds(3)]
let expected: [UInt64] = [2_000_000_000, 10_000_000, 7_000, 3]
for (interval, count) in zip(intervals, expected) {
    check(nanoseconds(from: start, to: deadline(after: interval, from: start)) == count, "\(interval) passed along")
}
check(deadline(after: .never, from: start) == .distantFuture, "+ .never")
check(DispatchTimeInterval.seconds(1) == .milliseconds(1000), "DispatchTimeInterval equality")
let wallDeadline: DispatchWallTime = .now() + .seconds(1)
check(wallDeadline > .now() && wallDeadline - 2.0 < .now(), "DispatchWallTime operators")

// 3. Queues, groups and semaphores.
let serial = DispatchQueue(label: "import-styles.serial", qos: .utility)
let concurrent = DispatchQueue(label: "import-styles.concurrent", attributes: .concurrent)
let group = DispatchGroup()
nonisolated(unsafe) var order: [Int] = []  // only on `serial`
for value in 0..<100 { serial.async(group: group) { order.append(value) } }
check(group.wait(timeout: patience) == .success, "DispatchGroup.wait")
check(serial.sync { order } == Array(0..<100), "serial queue order")
let semaphore = DispatchSemaphore(value: 0)
check(semaphore.wait(timeout: .now() + .milliseconds(1)) == .timedOut, "DispatchSemaphore timeout")
concurrent.async { semaphore.signal() }
check(semaphore.wait(timeout: patience) == .success, "DispatchSemaphore.signal from a queue")
nonisolated(unsafe) var squares = [Int](repeating: 0, count: 16)  // one slot per iteration
squares.withUnsafeMutableBufferPointer { slots in
    nonisolated(unsafe) let slots = slots
    DispatchQueue.concurrentPerform(iterations: slots.count) { index in slots[index] = index * index }
}
check(squares == (0..<16).map { $0 * $0 }, "concurrentPerform")

// 4. Work items: QoS, flags, preconditions, wait.
nonisolated(unsafe) var itemRan = false  // written by the item, read after `wait`
let item = DispatchWorkItem(qos: .userInitiated, flags: [.barrier]) {
    dispatchPrecondition(condition: .onQueue(concurrent))
    itemRan = true
}
concurrent.async(execute: item)
check(item.wait(timeout: patience) == .success && itemRan, "DispatchWorkItem with flags")
let key = DispatchSpecificKey<String>()
serial.setSpecific(key: key, value: "serial")
check(serial.sync { DispatchQueue.getSpecific(key: key) } == "serial", "queue-specific values")

// 5. Timers: asyncAfter is never early; a timer source ticks, then cancels.
let asked = DispatchTime.now()
nonisolated(unsafe) var firedAt = DispatchTime.distantFuture  // written before the signal
serial.asyncAfter(deadline: asked + .milliseconds(10)) { firedAt = .now(); semaphore.signal() }
check(semaphore.wait(timeout: patience) == .success, "asyncAfter fired")
check(firedAt >= asked + .milliseconds(10), "asyncAfter not early")
nonisolated(unsafe) let timer = DispatchSource.makeTimerSource(queue: serial)
nonisolated(unsafe) var ticks = 0  // only on `serial`
timer.setEventHandler {
    ticks += Int(timer.data)
    if ticks >= 3 { timer.cancel() }
}
timer.setCancelHandler { semaphore.signal() }
timer.schedule(deadline: .now() + .milliseconds(5), repeating: .milliseconds(5), leeway: .milliseconds(1))
timer.activate()
check(semaphore.wait(timeout: patience) == .success && serial.sync { ticks } >= 3, "timer source")

// 6. Closures typed @convention(block), as code written against Dispatch's
// `execute: @Sendable @convention(block) () -> Void` has them: the program links the blocks runtime.
let signalling: @Sendable @convention(block) () -> Void = { semaphore.signal() }
serial.async(execute: signalling)
check(semaphore.wait(timeout: patience) == .success, "@convention(block) closure")

// 7. Style-specific: Foundation still works beside Ringlet, and the toolchain's
// Dispatch is still there under its module name.
#if IMPORT_STYLE_FOUNDATION_ESSENTIALS || IMPORT_STYLE_FOUNDATION
check(Date() > Date(timeIntervalSince1970: 0), "Date")
let bytes = Data([1, 2, 3])
let dispatchData = bytes.withUnsafeBytes { DispatchData(bytes: $0) }
check(Data(dispatchData) == bytes, "Data from DispatchData and back")
#endif
#if IMPORT_STYLE_FOUNDATION
let operations = OperationQueue()  // Foundation's own queue, on the toolchain's Dispatch
nonisolated(unsafe) var operationRan = false  // written by the operation, read after the wait
operations.addOperation { operationRan = true }
operations.waitUntilAllOperationsAreFinished()
check(operationRan, "OperationQueue")
let toolchainQueue = Dispatch.DispatchQueue(label: "import-styles.toolchain")
check(String(reflecting: type(of: toolchainQueue)) == "Dispatch.DispatchQueue", "Dispatch.DispatchQueue")
check(toolchainQueue.sync { 7 } == 7, "the toolchain's queue runs")
#endif

// 8. The main queue, drained by dispatchMain(), ends the program.
DispatchQueue.global(qos: .utility).asyncAfter(deadline: patience) {
    print("import-styles: \(style): FAILED: the main queue never ran")
    Runtime.exit(status: 1)
}
let mainQueue = DispatchQueue.main
group.enter()
concurrent.async { group.leave() }
group.notify(queue: mainQueue) {
    dispatchPrecondition(condition: .onQueue(mainQueue))
    check(Runtime.statistics.itemsRunPerQoS.total > 0, "Runtime.statistics")
    print("import-styles: \(style): ok (\(checks) checks)")
    Runtime.exit(status: 0)
}
dispatchMain()
