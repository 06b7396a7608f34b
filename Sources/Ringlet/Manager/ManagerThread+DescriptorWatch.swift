// The descriptor watch: a descriptor closed, or replaced with dup2(2), under a
// DispatchIO operation or a read or write source is noticed when bytes come — but a
// file that stays quiet brings none: the operation never ended, and on io_uring its
// request kept the closed file (a socket's peer saw no EOF). While such operations
// wait or such sources are armed, the manager looks every `descriptorCheckMilliseconds`
// whether each descriptor still names its file; the parts that own them (the I/O
// engine, the kernel source side) add their check on first use, so a program without
// them links none of it. Manager thread only.
//
//   idle --(1) an operation on a stream, or a read/write source--> armed
//   armed --(2) look: something still watched--> armed   --(2) nothing left--> idle
//
//   (1) armDescriptorWatch   (2) descriptorWatchTick

extension ManagerThread {
    /// Adds a part's check: it ends what lost its descriptor and returns whether it
    /// still has something to watch.
    func addDescriptorCheck(_ check: @escaping (Ring) -> Bool) {
        descriptorChecks.append(check)
    }

    /// Something that needs watching began: the next look is scheduled unless it is.
    func armDescriptorWatch() {
        let milliseconds = configuration.descriptorCheckMilliseconds
        if descriptorWatchArmed || milliseconds == 0 { return }
        descriptorWatchArmed = true
        let period = UInt64(milliseconds) * 1_000_000
        descriptorWatchTimer = armTimer(deadline: MonotonicClock.nanoseconds &+ period, wall: false, interval: 0,
                                        leeway: period, owner: .action { [unowned(unsafe) self] in
                                            descriptorWatchTick()
                                        })
    }

    /// The last read or write source went, or the last request of DispatchIO came back:
    /// with neither left, the next look is dropped, so that the watch leaves no wake-up
    /// behind it once the program is idle.
    func descriptorWatchMayStop() {
        guard descriptorWatchArmed, let handle = descriptorWatchTimer else { return }
        if !sourceSlots.isEmpty { return }
        if let engine = ioEngineIfMade, engine.counters.inFlight > 0 { return }
        descriptorWatchArmed = false
        descriptorWatchTimer = nil
        disarmTimer(handle)
    }

    private func descriptorWatchTick() {
        descriptorWatchArmed = false
        descriptorWatchTimer = nil
        guard let ring = ringForSources else { return }
        var watching = false
        for check in descriptorChecks where check(ring) { watching = true }
        if watching { armDescriptorWatch() }
    }
}
