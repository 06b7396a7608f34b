import Synchronization
import Testing
@testable import Ringlet

/// The C library refuses a thread stack below its minimum (EINVAL), and the minimum is
/// per architecture: 16 KiB on x86-64 glibc, 128 KiB on aarch64. The epoll backend's I/O
/// helpers ask for 64 KiB, so on aarch64 the runtime did not start where io_uring was
/// refused. A smaller request now gets the minimum.
@Suite struct ThreadStackTests {
    @Test func aStackBelowTheCLibrarysMinimumGetsTheMinimum() throws {
        let ran = Atomic<Bool>(false)
        // One byte is below every C library's minimum: without the rounding up,
        // pthread_attr_setstacksize refuses it here too.
        try ThreadControl.start(stackBytes: 1) { ran.store(true, ordering: .releasing) }
        #expect(eventually { ran.load(ordering: .acquiring) })
    }
}
