// Ringlet's main queue inside Foundation's main run loop: `RunLoop.main.run()`,
// `run(until:)` and XCTest's waits drain the toolchain's main queue, so the bridge
// watches Ringlet's main-queue descriptor (`Runtime.mainQueueDescriptor()`) with a
// read source of the toolchain's Dispatch on the toolchain's main queue: when
// Ringlet's main queue has work, the run loop runs the source's handler on the main
// thread, which drains a batch of it (Architecture, "The main queue in another loop").
// Started by the runtime, once, when work first reaches Ringlet's main queue in a
// program that links this module (ringlet_run_loop.c); a program in `dispatchMain()`
// never drains the toolchain's main queue, so there the handler never runs.

import Dispatch
@_spi(RunLoopBridge) import Ringlet

/// The toolchain's source, kept for the life of the process.
nonisolated(unsafe) private var bridgeSource: Dispatch.DispatchSourceRead?

@_cdecl("ringlet_run_loop_bridge_start")
public func ringletRunLoopBridgeStart() {
    guard let descriptor = try? Runtime.mainQueueDescriptor() else { return }
    let source = Dispatch.DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: Dispatch.DispatchQueue.main)
    source.setEventHandler { Runtime.drainMainQueueFromRunLoop() }
    source.resume()
    bridgeSource = source
}
