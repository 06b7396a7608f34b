import Ringlet

// An async main that starts the runtime (ConcurrencyMainTests start it). Its task was
// bound to the toolchain's main executor before this line ran, so Ringlet must leave
// Swift concurrency on the toolchain's executors, and say so: had it installed its own,
// the await below would never resume (the task would wait on a main queue nothing
// drains). Exits 0 when the await resumed with Ringlet not installed; 1 when Ringlet
// installed itself; 2 when the await did not resume within 20 s (a Ringlet timer,
// which works whatever the executor).

do {
    _ = try Runtime.start(configuration: RuntimeConfiguration(cores: 2))
} catch {
    print("probe failed: Runtime.start failed: \(error)")
    Runtime.exit(status: 1)
}
if Runtime.current.runsSwiftConcurrency {
    print("probe failed: Ringlet installed its executors inside an async main")
    Runtime.exit(status: 1)
}
DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(20)) {
    print("probe failed: the async main never resumed after an await")
    Runtime.exit(status: 2)
}
let value = await Task.detached { 42 }.value
Runtime.exit(status: value == 42 ? 0 : 1)
