import Foundation
import RingletFoundationCompat
import Synchronization
import XCTest

// What the tests check in a program that imports Foundation (OtherLoopTests): started
// with one argument, the scenario; exits 0 when it held, else 1 after saying what
// failed on stdout.
//
//   run-loop   the main thread sits in RunLoop.main.run(until:), never in
//              dispatchMain(): 200 DispatchQueue.main items (Ringlet's, through
//              RingletFoundationCompat) and @MainActor jobs sent from the pool, and an
//              asyncAfter onto the main queue, run there, on the main thread, in order.
//   run-loop-nested  a main-queue item that spins RunLoop.main itself: the main
//              queue's next item waits for it (the queue is serial), the spin neither
//              traps nor busy-loops on the descriptor, and the next item runs after.
//   xctest-wait  a scheduler-style XCTest wait: expectations fulfilled by work on
//              Ringlet's main queue (async, asyncAfter, a @MainActor task) complete
//              inside XCTWaiter's wait, which spins RunLoop.main.

@main
struct FoundationProbe {
    static func main() {
        let scenario = CommandLine.arguments.dropFirst().first ?? ""
        do {
            try Runtime.start(configuration: RuntimeConfiguration(cores: 2))
        } catch {
            fail("Runtime.start failed: \(error)")
        }
        if scenario == "xctest-wait" { xctestWait() }
        if scenario == "run-loop-nested" { runLoopNested() }
        guard scenario == "run-loop" else { fail("unknown scenario '\(scenario)'") }
        let log = Mutex<(values: [Int], offMain: Int)>(([], 0))
        let sent = 200
        let record: @Sendable (Int) -> Void = { index in
            let onMain = Runtime.isMainThread
            log.withLock { $0.values.append(index); if !onMain { $0.offMain += 1 } }
        }
        DispatchQueue.global().async {
            for index in 0..<sent {
                if index % 2 == 0 {
                    DispatchQueue.main.async { record(index) }
                } else {
                    Task { @MainActor in record(index) }
                }
            }
            DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(20)) { record(sent) }
        }
        let deadline = Date().addingTimeInterval(20)
        while log.withLock({ $0.values.count }) < sent + 1 {
            if Date() > deadline {
                fail("after 20 s in RunLoop.main: \(log.withLock { $0.values.count }) of \(sent + 1) items ran")
            }
            _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.1))
        }
        let (values, offMain) = log.withLock { ($0.values, $0.offMain) }
        if offMain > 0 { fail("\(offMain) item(s) ran off the main thread") }
        if values != Array(0...sent) { fail("the items ran out of order: \(values.prefix(20))...") }
        print("run-loop: \(sent + 1) items ran inside RunLoop.main")
        Runtime.exit(status: 0)
    }
}

/// Expectations fulfilled on Ringlet's main queue, awaited the way an XCTest case does.
func xctestWait() -> Never {
    let expectations = Expectations()
    DispatchQueue.main.async { expectations.ran(0) }
    DispatchQueue.main.asyncAfter(deadline: .now() + .milliseconds(50)) { expectations.ran(1) }
    Task { @MainActor in expectations.ran(2) }
    let result = XCTWaiter().wait(for: expectations.all, timeout: 20)
    if result != .completed { fail("XCTWaiter ended with \(result.rawValue) (1 = completed): the main queue's work never ran") }
    if expectations.offMain.load(ordering: .relaxed) > 0 { fail("work of the main queue ran off the main thread") }
    print("xctest-wait: 3 expectations fulfilled by Ringlet's main queue inside XCTWaiter's wait")
    Runtime.exit(status: 0)
}

/// A main-queue item spins RunLoop.main for 300 ms while the next item waits.
func runLoopNested() -> Never {
    let order = Mutex<[String]>([])
    let done = Atomic<Bool>(false)
    DispatchQueue.main.async {
        order.withLock { $0.append("outer begins") }
        DispatchQueue.main.async {
            order.withLock { $0.append("next") }
            done.store(true, ordering: .relaxed)
        }
        let cpuBefore = processCPUNanoseconds()
        _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.3))
        let cpu = processCPUNanoseconds() - cpuBefore
        // A handler re-run on a descriptor that stays readable would spin a core for
        // the whole 300 ms.
        if cpu > 150_000_000 { fail("the nested run loop used \(cpu / 1_000_000) ms of CPU in 300 ms") }
        order.withLock { $0.append("outer ends") }
    }
    let deadline = Date().addingTimeInterval(20)
    while !done.load(ordering: .relaxed) {
        if Date() > deadline { fail("after 20 s: \(order.withLock { $0 })") }
        _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.1))
    }
    let seen = order.withLock { $0 }
    if seen != ["outer begins", "outer ends", "next"] { fail("the main queue ran \(seen)") }
    print("run-loop-nested: \(seen)")
    Runtime.exit(status: 0)
}

/// User and system CPU time of the process, in nanoseconds.
func processCPUNanoseconds() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000_000
        + Int(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1_000
}

/// Three expectations, fulfilled from closures on the main queue.
// @unchecked Sendable: XCTestExpectation synchronises its own fulfilment.
final class Expectations: @unchecked Sendable {
    let all = (0..<3).map { XCTestExpectation(description: "main-queue work \($0)") }
    let offMain = Atomic<Int>(0)

    func ran(_ index: Int) {
        if !Runtime.isMainThread { offMain.add(1, ordering: .relaxed) }
        all[index].fulfill()
    }
}

func fail(_ message: String) -> Never {
    print("probe failed: \(message)")
    Runtime.exit(status: 1)
}
