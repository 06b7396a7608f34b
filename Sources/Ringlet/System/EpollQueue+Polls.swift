import CRinglet

// Readiness on epoll (manager thread only). io_uring lets any number of polls wait on
// one descriptor; epoll takes each descriptor once. So each descriptor is one `Watch`
// in the set, registered for the union of its waiters' events, and a ready event goes
// to every waiter that asked for it: the polls of read, write, signal, process and
// file-system sources, the manager's wake-up eventfd, and transfers waiting for a
// pipe or socket.
//
// Registrations are edge-triggered: an event comes when the descriptor is woken (data
// arrives, room frees), not while it stays ready — what io_uring's multishot poll
// reports, so a read source whose handler has not drained the pipe yet does not make
// the manager spin. A waiter that joins a descriptor already in the set may have
// missed a wake-up, so it looks at the descriptor at once (poll(2), no wait); adding
// or widening a registration looks by itself (the kernel's ep_insert and ep_modify).

extension EpollQueue {
    /// Who waits for a descriptor, and for which events (RL_POLLIN, RL_POLLOUT).
    struct Waiter {
        enum Kind {
            /// A poll request; a multishot one stays after each event.
            case poll(multishot: Bool)
            /// A transfer that found its pipe or socket not ready (or that a helper
            /// makes once it is).
            case transfer(Transfer)
            /// A socket request that found its socket not ready.
            case socket(SocketWork)
        }

        let userData: UInt64
        let events: UInt32
        let kind: Kind

        var isPoll: Bool {
            if case .poll = kind { return true }
            return false
        }
    }

    /// One descriptor in the epoll set: the events it is registered for, and its waiters.
    final class Watch {
        let fd: Int32
        var events: UInt32
        var waiters: [Waiter]

        init(fd: Int32, events: UInt32, waiters: [Waiter]) {
            self.fd = fd
            self.events = events
            self.waiters = waiters
        }
    }

    private func data(_ fd: Int32) -> UInt64 { UInt64(UInt32(bitPattern: fd)) }

    /// Where `fd`'s watch is in `watches`, or where it would go.
    func watchIndex(_ fd: Int32) -> (found: Bool, index: Int) {
        var low = 0, high = watches.count
        while low < high {
            let middle = (low + high) / 2
            if watches[middle].fd < fd { low = middle + 1 } else { high = middle }
        }
        return (low < watches.count && watches[low].fd == fd, low)
    }

    /// Makes `waiter` wait for `fd`. `justTried`: a transfer found `fd` not ready an
    /// instant ago, after the descriptor was in the set: any readiness since is a
    /// wake-up the set will report, so there is nothing to look at.
    func addWaiter(fd: Int32, _ waiter: Waiter, justTried: Bool = false) {
        let (found, index) = watchIndex(fd)
        guard found else {
            register(fd, waiter, at: index)
            return
        }
        let watch = watches[index]
        if watch.waiters.isEmpty {
            rearm(watch, waiter, at: index)
            return
        }
        let wanted = watch.events | waiter.events
        if wanted != watch.events {
            do throws(Errno) {
                try EpollCalls.control(epfd, .modify, fd: fd, events: wanted | EpollCalls.edgeTriggered, data: data(fd))
            } catch {
                refuse(waiter, error)
                return
            }
            watch.events = wanted
            watch.waiters.append(waiter)  // the kernel looks at `fd` and reports it if ready
            return
        }
        if justTried {
            watch.waiters.append(waiter)
            return
        }
        let ready: UInt32
        do throws(Errno) {
            ready = try Descriptors.readyEvents(fd, waiter.events)
        } catch {
            refuse(waiter, error)
            return
        }
        if ready & Descriptors.notOpen != 0 {
            refuse(waiter, .badFile)
            return
        }
        let hits = ready & (waiter.events | EpollCalls.errorOrHangUp)
        if hits == 0 {
            watch.waiters.append(waiter)
            return
        }
        switch waiter.kind {
        case .poll(let multishot):
            post(waiter.userData, Int32(bitPattern: hits), flags: multishot ? RL_CQE_F_MORE : 0)
            if multishot { watch.waiters.append(waiter) }
        case .transfer(let transfer):
            attempt(transfer)
        case .socket(let work):
            attempt(work)
        }
    }

    /// A watch nobody waits on stays in the set until the next wait (most come back at
    /// once: the wake-up eventfd, a stream's next read), but its descriptor may have
    /// been closed since — which took it out of the set — and the number given to a
    /// new file. So the registration is modified, not trusted: the kernel then looks
    /// at the descriptor (ep_modify) and reports it if ready; ENOENT says the file went
    /// away, and the new one is put in the set.
    private func rearm(_ watch: Watch, _ waiter: Waiter, at index: Int) {
        do throws(Errno) {
            try EpollCalls.control(epfd, .modify, fd: watch.fd, events: waiter.events | EpollCalls.edgeTriggered,
                                   data: data(watch.fd))
        } catch {
            guard error == .noSuchFile else {
                refuse(waiter, error)
                return
            }
            watches.remove(at: index)
            register(watch.fd, waiter, at: index)
            return
        }
        watch.events = waiter.events
        watch.waiters.append(waiter)
    }

    /// Puts `fd` in the set for `waiter`. A descriptor epoll refuses with EPERM cannot
    /// be polled (a regular file, a directory): io_uring reports such a file ready at
    /// once, and so does this.
    private func register(_ fd: Int32, _ waiter: Waiter, at index: Int) {
        do throws(Errno) {
            try EpollCalls.control(epfd, .add, fd: fd, events: waiter.events | EpollCalls.edgeTriggered, data: data(fd))
        } catch {
            if error == .notPermitted {
                switch waiter.kind {
                case .poll:
                    post(waiter.userData, Int32(bitPattern: waiter.events & (Descriptors.readable | Descriptors.writable)))
                case .transfer(let transfer):
                    helperJobs.append(job(transfer))
                case .socket:
                    refuse(waiter, .notSocket)
                }
                return
            }
            // EEXIST: still in the set under this number from before (a removal that
            // found it closed while a duplicate kept the file open): take it over.
            guard error == .fileExists, (try? EpollCalls.control(epfd, .modify, fd: fd,
                events: waiter.events | EpollCalls.edgeTriggered, data: data(fd))) != nil else {
                refuse(waiter, error)
                return
            }
        }
        watches.insert(Watch(fd: fd, events: waiter.events, waiters: [waiter]), at: index)
    }

    /// The waiter's request fails with `error` (EBADF, ENOMEM, ENOSPC: fs.epoll.max_user_watches).
    private func refuse(_ waiter: Waiter, _ error: Errno) {
        post(waiter.userData, -error.rawValue)
    }

    /// The set reported `fd` with `events`: each waiter that asked for them is served.
    func watchReady(fd: Int32, events: UInt32) {
        let (found, index) = watchIndex(fd)
        guard found else { return }  // removed since the wait returned
        let watch = watches[index]
        let waiting = watch.waiters
        watch.waiters.removeAll(keepingCapacity: true)
        var woken: [Transfer] = []
        var wokenSockets: [SocketWork] = []
        for waiter in waiting {
            let hits = events & (waiter.events | EpollCalls.errorOrHangUp)
            if hits == 0 {
                watch.waiters.append(waiter)
                continue
            }
            switch waiter.kind {
            case .poll(let multishot):
                post(waiter.userData, Int32(bitPattern: hits), flags: multishot ? RL_CQE_F_MORE : 0)
                if multishot { watch.waiters.append(waiter) }
            case .transfer(let transfer):
                woken.append(transfer)
            case .socket(let work):
                wokenSockets.append(work)
            }
        }
        if watch.waiters.count < waiting.count { changedWatches.append(fd) }
        // After the loop: a transfer that is still not ready joins the watch again.
        for transfer in woken { attempt(transfer) }
        for work in wokenSockets { attempt(work) }
    }

    /// Takes the waiter `target` out (a poll, or with `pollsOnly` false a transfer
    /// too); its request completes with -ECANCELED. A descriptor left without waiters
    /// leaves the set now, before whoever removed the poll can close it.
    func removeWaiter(_ target: UInt64, pollsOnly: Bool) -> Bool {
        for (index, watch) in watches.enumerated() {
            guard let position = watch.waiters.firstIndex(where: {
                $0.userData == target && (!pollsOnly || $0.isPoll)
            }) else { continue }
            watch.waiters.remove(at: position)
            post(target, -Errno.cancelled.rawValue)
            if watch.waiters.isEmpty {
                try? EpollCalls.control(epfd, .delete, fd: watch.fd, events: 0, data: 0)
                watches.remove(at: index)
            } else {
                changedWatches.append(watch.fd)
            }
            return true
        }
        return false
    }

    /// Before a wait: a descriptor nobody waits on any more leaves the set (so it
    /// cannot wake the manager), one whose waiters want fewer events is narrowed.
    /// Done here, not when its last one-shot waiter left, because most come back at
    /// once (the wake-up eventfd, a stream's next read).
    func tidyWatches() {
        if changedWatches.isEmpty { return }
        for fd in changedWatches {
            let (found, index) = watchIndex(fd)
            guard found else { continue }
            let watch = watches[index]
            if watch.waiters.isEmpty {
                try? EpollCalls.control(epfd, .delete, fd: fd, events: 0, data: 0)
                watches.remove(at: index)
                continue
            }
            var wanted: UInt32 = 0
            for waiter in watch.waiters { wanted |= waiter.events }
            if wanted != watch.events,
               (try? EpollCalls.control(epfd, .modify, fd: fd, events: wanted | EpollCalls.edgeTriggered,
                                        data: data(fd))) != nil {
                watch.events = wanted
            }
        }
        changedWatches.removeAll(keepingCapacity: true)
    }
}
