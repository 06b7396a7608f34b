// Which executor this test bundle's tasks get: it defines
// ringlet_keep_toolchain_executors (Support/KeepToolchainExecutors.swift), so the
// toolchain's, from load and for the process's life — whichever test starts or touches
// the runtime first. Programs without the symbol get Ringlet's from load
// (ConcurrencyMainTests, RingletAsyncMainProbe).

import Testing
@testable import Ringlet

@Suite struct ExecutorsAtLoadTests {
    @Test func theBundleSaidSoBeforeMain() {
        #expect(ExecutorsAtLoad.current == .keptBySymbol)
    }

    /// A runtime started now (this test's task, or any other thread) does not switch
    /// executors: the decision was made at load.
    @Test func aRuntimeStartNeverSwitchesExecutors() async {
        _ = Runtime.current
        #expect(!Runtime.current.runsSwiftConcurrency)
        #expect(!ConcurrencyExecutors.install(RuntimeConfiguration(cores: 2)))
        let onPool = await Task.detached { onPoolThread }.value
        #expect(!onPool, "a task ran on one of Ringlet's pool threads")
    }
}
