import Synchronization

// The manager's side of the descriptors bands watch (BandDescriptors.swift): it puts a
// read or write source's descriptor in the set of the band whose workers run its
// handler, takes it out at cancellation, and takes the sets' events itself where no
// worker of the band may: at its once-a-second look at the bands
// (ManagerThread+BandTimers.swift), and through a poll of the set on its ring while it
// watches a band one of whose workers blocked with none of them parked
// (`Scheduler.bandsTheManagerWatches`). Manager thread only.
extension ManagerThread {
    #if DEBUG
    /// Answers false for a source whose descriptor must stay with the ring's poll (tests
    /// of that path; the manager thread asks it at each registration).
    static let bandWatchHook = TestHook<DispatchSource, Bool>()
    #endif

    /// Puts `source`'s descriptor (its slot claimed) in its band's set; false when it
    /// stays with the ring's poll (no band runs its handlers, or the set refused it).
    func watchByBand(_ source: DispatchSource) -> Bool {
        #if DEBUG
        if Self.bandWatchHook.call(source) == false { return false }
        #endif
        let fd: Int32, events: UInt32
        switch source.kind {
        case .read(let descriptor): (fd, events) = (descriptor, Descriptors.readable)
        case .write(let descriptor): (fd, events) = (descriptor, Descriptors.writable)
        default: return false
        }
        let priority = QoSPriority(packed: source.eventPriority.load(ordering: .relaxed))
        guard let watched = scheduler.keptDescriptors(forIndex: RunQueueIndex.of(priority)),
              watched.add(source, fd: fd, events: events, slot: source.registration.slot,
                          generation: source.registration.generation) else { return false }
        source.registration.descriptorBand = watched
        // Its watcher may sleep on its futex: it moves into the set.
        scheduler.bandAimMovedEarlier(watched.band)
        return true
    }

    /// Takes `source`'s descriptor out of its band's set, if it is in one; true when it was.
    func stopBandWatch(_ source: DispatchSource) -> Bool {
        guard let watched = source.registration.descriptorBand else { return false }
        source.registration.descriptorBand = nil
        let fd: Int32
        switch source.kind {
        case .read(let descriptor), .write(let descriptor): fd = descriptor
        default: return true
        }
        watched.remove(source, fd: fd, slot: source.registration.slot)
        return true
    }

    /// Takes what a band's set has ready, unless another thread holds it (its watcher
    /// sleeping there, which takes what comes); the handlers go to workers. Inside the
    /// reap's wake batch.
    func takeBandDescriptorEvents(_ watched: BandDescriptors) {
        var left = false
        let ready = watched.takeReady(into: bandReadyEvents, left: &left)
        if left { scheduler.bandAimMovedEarlier(watched.band) }
        watched.deliver(bandReadyEvents, ready, byManager: true, trace: trace)
    }

    /// Arms a one-shot poll of the set of each band the manager watches that has
    /// descriptors and no poll armed yet.
    func armBandDescriptorPolls(_ ring: Ring) {
        let watchedBands = scheduler.bandsTheManagerWatches.load(ordering: .relaxed)
        for band in 0..<3 {
            let bit = UInt8(1) << UInt8(band)
            guard watchedBands & bit != 0, bandDescriptorPolls & bit == 0, let watched = scheduler.keptDescriptors[band],
                  watched.watchesAny else { continue }
            bandDescriptorPolls |= bit
            let fd = watched.epollFD
            retrying(ring) { () throws(Errno) in
                try ring.preparePollIn(fd: fd, userData: userData(.bandDescriptors, UInt64(band)))
            }
        }
    }

    /// A band's set became ready while the manager watched the band: it takes the
    /// events (the next loop polls again while it still watches the band).
    func bandDescriptorsPolled(_ completion: Ring.Completion) {
        let band = Int(completion.userData & 0xFF)
        guard band < 3 else { return }
        bandDescriptorPolls &= ~(UInt8(1) << UInt8(band))
        bandDescriptorPollsCompleted.wrappingAdd(1, ordering: .relaxed)
        if let watched = scheduler.keptDescriptors[band] { takeBandDescriptorEvents(watched) }
    }
}
