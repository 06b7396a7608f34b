// The test bundle keeps Swift concurrency on the toolchain's executors
// (ringlet_executors.c): Swift Testing runs every test as a task, and many tests here
// count the pool's threads exactly, hold workers on purpose, or start runtimes of their
// own configuration in child processes; with Ringlet's executors, a test's tasks would
// share the pool they measure. What an async program gets with Ringlet's executors is
// tested in programs of their own (RingletAsyncMainProbe, ConcurrencyMainTests), and a
// test target that leaves this symbol out gets Ringlet's executors from load, whichever
// test touches Ringlet first (ExecutorsAtLoadTests).

@_cdecl("ringlet_keep_toolchain_executors")
func ringletKeepToolchainExecutors() {}
