// Which executor this test bundle's tasks get: it defines
// ringlet_keep_toolchain_executors (Support/KeepToolchainExecutors.swift), so the
// toolchain's, from load and for the process's life — whichever test starts or touches
// the runtime first. Programs without the symbol get Ringlet's from load
// (ConcurrencyMainTests, RingletAsyncMainProbe).

import Glibc
import Testing
@testable import Ringlet

@Suite struct ExecutorsAtLoadTests {
    /// The calling thread's name (/proc/thread-self/comm).
    static var threadName: String {
        let fd = open("/proc/thread-self/comm", O_RDONLY)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = read(fd, &bytes, bytes.count)
        return String(decoding: bytes.prefix(max(count, 0)).prefix { $0 != 10 }, as: UTF8.self)
    }

    @Test func theBundleSaidSoBeforeMain() {
        #expect(ExecutorsAtLoad.current == .keptBySymbol)
    }

    /// A runtime started now (this test's task, or any other thread) does not switch
    /// executors: the decision was made at load.
    @Test func aRuntimeStartNeverSwitchesExecutors() async {
        _ = Runtime.current
        #expect(!Runtime.current.runsSwiftConcurrency)
        #expect(!ConcurrencyExecutors.install(RuntimeConfiguration(cores: 2)))
        let name = await Task.detached { Self.threadName }.value
        #expect(!name.hasPrefix("ringlet-"), "a task ran on Ringlet's thread '\(name)'")
    }
}
