import Synchronization

/// How the manager wakes the workers its pushes chose (timer windows, source events;
/// DispatchIO's completions wake theirs at once): all at once when its reap of the ring
/// is done (Scheduler+WakeBatch.swift), and, where the kernel takes futex wakes as
/// io_uring requests (IORING_OP_FUTEX_WAKE, Linux 6.7), from inside the io_uring_enter
/// in which the manager goes back to sleep.
///
/// Why: a worker the kernel wakes on the manager's own CPU preempts the manager at the
/// return of its futex(2) call, and the manager runs again only to go to sleep — three
/// context switches for one hand-off. Woken from inside the manager's wait, the worker
/// takes the CPU when the manager sleeps: two. The wake comes a few microseconds later,
/// after the manager has armed its next timeout. On older kernels, on the epoll backend
/// and when a queued wake is refused, the wake is a futex(2) call as before.
extension ManagerThread {
    /// Wakes queued on the ring since start (`RuntimeStatistics.workerWakesInManagerWait`).
    var workerWakesInWaitCount: Int { workerWakesInWait.load(ordering: .relaxed) }
    /// Queued wakes the kernel refused, made at once instead (tests).
    var workerWakesRefusedCount: Int { workerWakesRefused.load(ordering: .relaxed) }

    /// Ends the reap's wake batch: queues each chosen worker's wake on the ring, or
    /// wakes it now.
    func endWakeBatch(_ ring: Ring) {
        guard ring.wakesFutexes else { return scheduler.endWakeBatch() }
        scheduler.endWakeBatch { worker in
            worker.event.announce()
            // A band's watcher waiting in epoll hears only its eventfd.
            if worker.event.sleepsInEpoll { return worker.event.wake() }
            do throws(Errno) {
                try ring.prepareFutexWake(word: worker.event.word, userData: userData(.workerWake, UInt64(worker.index)))
                workerWakesQueued = true
                workerWakesInWait.wrappingAdd(1, ordering: .relaxed)
            } catch {
                // The submission queue stayed full: the wake cannot wait for the sleep.
                worker.event.wake()
            }
        }
    }

    /// The manager goes round its loop again without sleeping: the queued wakes go now.
    func submitWorkerWakes(_ ring: Ring) {
        guard workerWakesQueued else { return }
        workerWakesQueued = false
        _ = try? ring.submitAndWait(waitFor: 0)
    }

    /// A queued wake the kernel refused (nothing else completes: IOSQE_CQE_SKIP_SUCCESS).
    /// The worker was announced; it is woken now.
    func workerWakeRefused(_ completion: Ring.Completion) {
        guard completion.result < 0 else { return }
        let index = Int(truncatingIfNeeded: completion.userData & 0x00FF_FFFF_FFFF_FFFF)
        let workers = scheduler.lock.withLock { scheduler.workers }
        guard index < workers.count else { ringletBug("a refused worker wake names worker \(index) of \(workers.count)") }
        workerWakesRefused.wrappingAdd(1, ordering: .relaxed)
        workers[index].event.wake()
    }
}
