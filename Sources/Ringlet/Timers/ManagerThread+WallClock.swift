import Synchronization

// Wall-clock timers (`asyncAfter(wallDeadline:)`, `schedule(wallDeadline:)`) live in
// the timer structure on the monotonic clock, converted with the offset between the
// two clocks when scheduled. A CLOCK_REALTIME timerfd with TFD_TIMER_CANCEL_ON_SET,
// polled on the ring, tells the manager when someone sets the clock (a board without
// an RTC at NTP sync); it then moves every wall-clock timer by how much the offset
// changed. Manager thread only.

extension ManagerThread {
    /// Arms the clock-change watch the first time a wall-clock timer is scheduled.
    func watchClockChanges() {
        guard clockWatchFD < 0, let ring = ringForSources else { return }
        do throws(Errno) {
            clockWatchFD = try KernelWatches.clockChanges()
        } catch {
            ringletWarning("timerfd refused (\(error.name)); wall-clock timers will not follow changes of the clock")
            clockWatchFD = Int32.max  // do not try again
            return
        }
        armClockWatch(ring)
    }

    func armClockWatch(_ ring: Ring) {
        let fd = clockWatchFD
        retrying(ring) { () throws(Errno) in
            try ring.preparePoll(fd: fd, events: Descriptors.readable, multishot: false,
                                 userData: userData(.clockChange, 0))
        }
    }

    func clockChanged(_ completion: Ring.Completion, _ ring: Ring) {
        if completion.result > 0 && (try? KernelWatches.clockChanges(rearming: clockWatchFD)) == nil {
            // The timerfd is closed: stop watching (timers keep their last offset).
            ringletWarning("the wall-clock watch could not be re-armed; wall-clock timers will not follow "
                + "further changes of the clock")
            clockWatchFD = Int32.max
        } else {
            armClockWatch(ring)
        }
        moveWallClockTimers()
    }

    /// Moves every wall-clock timer by how much the wall clock moved against the
    /// monotonic clock, so each still fires when the wall clock reads its deadline.
    func moveWallClockTimers() {
        let offset = Self.wallClockOffset()
        timers.moveWallClockTimers(offset: offset) { source, handle in source.registration.timer = handle }
    }
}
