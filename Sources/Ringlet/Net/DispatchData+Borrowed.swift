/// Data over bytes a layer above the runtime owns (an event loop's buffer on its way to
/// a vectored send), without a copy and without an item for its release.
@_spi(RingletNet)
extension DispatchData {
    /// Data over `bytes`; `release` runs on the thread that lets go of the last data
    /// referring to them (a send's completion, on the manager), so it must only drop
    /// references — GCD's `.custom` deallocator, which runs on a queue, costs an item.
    public init(bytesNoCopy bytes: UnsafeRawBufferPointer, releasedInline release: @escaping () -> Void) {
        self.init(regions: [])
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            release()
            return
        }
        let storage = DataStorage(base: UnsafeMutableRawPointer(mutating: base), capacity: bytes.count,
                                  release: .inline(release))
        appendRegion(DataRegion(storage: storage, start: 0, count: bytes.count))
    }
}
