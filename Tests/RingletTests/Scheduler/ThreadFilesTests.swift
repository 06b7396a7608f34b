// What the runtime reads from /proc about its own threads: the context switches of the
// threads named with a prefix (`Runtime.statistics.poolContextSwitches`), parsed from
// /proc/self/task/<tid>/status by the C boundary without snprintf(3) or strtoll(3)
// (Sources/CRinglet/ringlet_thread.c), and a thread's scheduler state from
// /proc/self/task/<tid>/stat, which the stall watch's kernel cover reads.

import Glibc
import Synchronization
import Testing
@testable import Ringlet

@Suite struct ThreadFilesTests {
    /// The sum the boundary reads lies between two sums read here, before and after:
    /// the counters only grow, so a misread count (or none) falls outside.
    @Test func contextSwitchesOfNamedThreadsAreTheKernelsCounts() throws {
        // Workers park and wake for these items, so their counts are not zero.
        let queue = DispatchQueue(label: "thread-files")
        for _ in 0..<20 {
            queue.sync {}
            usleep(1000)
        }
        let before = Self.switches(threadsNamed: "ringlet-w")
        let read = try #require(ThreadControl.contextSwitches(threadsNamed: "ringlet-w"))
        let voluntary = try #require(ThreadControl.voluntaryContextSwitches(threadsNamed: "ringlet-w"))
        let after = Self.switches(threadsNamed: "ringlet-w")
        #expect(before.voluntary > 0)
        #expect(read >= before.all && read <= after.all, "read \(read), before \(before.all), after \(after.all)")
        #expect(voluntary >= before.voluntary && voluntary <= after.voluntary,
                "read \(voluntary), before \(before.voluntary), after \(after.voluntary)")
    }

    /// A worker blocked in read(2) reads as sleeping in the kernel; the calling
    /// thread, which runs, does not.
    @Test func aThreadBlockedInTheKernelReadsAsSleeping() {
        #expect(!ThreadControl.isSleepingInKernel(ThreadControl.threadID))
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let reader = fds[0]
        let tid = Atomic<Int32>(0)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            tid.store(ThreadControl.threadID, ordering: .releasing)
            var byte: UInt8 = 0
            _ = Glibc.read(reader, &byte, 1)
            done.signal()
        }
        #expect(eventually {
            let thread = tid.load(ordering: .acquiring)
            return thread != 0 && ThreadControl.isSleepingInKernel(thread)
        })
        var byte: UInt8 = 1
        _ = write(fds[1], &byte, 1)
        #expect(waited(done))
    }

    /// (all switches, voluntary ones) of the threads whose name starts with `prefix`,
    /// read here line by line.
    static func switches(threadsNamed prefix: String) -> (all: Int, voluntary: Int) {
        var all = 0, voluntary = 0
        guard let directory = opendir("/proc/self/task") else { return (0, 0) }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let task = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if task.hasPrefix(".") { continue }
            guard let file = fopen("/proc/self/task/\(task)/status", "r") else { continue }
            defer { fclose(file) }
            var line = [CChar](repeating: 0, count: 512)
            var named = false
            while fgets(&line, 512, file) != nil {
                let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
                if text.hasPrefix("Name:\t") { named = text.dropFirst(6).hasPrefix(prefix) }
                guard named, let count = Int(text.split(separator: "\t").last?.split(separator: "\n").first ?? "") else {
                    continue
                }
                if text.hasPrefix("voluntary_ctxt_switches:") {
                    all += count
                    voluntary += count
                } else if text.hasPrefix("nonvoluntary_ctxt_switches:") {
                    all += count
                }
            }
        }
        return (all, voluntary)
    }
}
