import Synchronization

/// Wake-ups deferred to the end of a batch. When the manager fires a timer window it
/// pushes one node per timer; waking a worker at the first push lets the kernel run that
/// worker at once on a busy machine (wake-up preemption), on the manager's CPU: the
/// worker runs one handler, finds its queue empty and parks, the manager resumes and
/// pushes the next, and so on: context switches for every timer rather than for every
/// window, and handlers that run late. So the manager wakes the workers its pushes
/// chose only once the whole window is pushed; a worker woken then drains it in one
/// go. Other threads' submissions are never deferred.
///
/// The manager batches the wake-ups of a whole reap of its ring (timer windows, source
/// events; DispatchIO's completions wake at once), and may hand them to its ring so that
/// they happen as it goes to sleep (ManagerThread+WorkerWakes.swift).
extension Scheduler {
    /// The calling thread's pushes from now on wake their workers only at
    /// `endWakeBatch()`. Manager thread only; batches do not nest.
    func beginWakeBatch() {
        _ = ThreadContext.current  // the identity compared below
        wakeBatchOwner.store(Self.callerIdentity, ordering: .relaxed)
    }

    /// Wakes the workers the batch's pushes chose: `wake` each (by default at once).
    func endWakeBatch(_ wake: (Worker) -> Void = { $0.event.post() }) {
        wakeBatchOwner.store(0, ordering: .relaxed)
        for worker in batchedWakes { wake(worker) }
        batchedWakes.removeAll(keepingCapacity: true)
    }

    /// Wakes `worker` now, or at the end of the calling thread's batch.
    @inline(__always)
    func post(_ worker: Worker) {
        let owner = wakeBatchOwner.load(ordering: .relaxed)
        if owner != 0 && owner == Self.callerIdentity {
            batchedWakes.append(worker)
        } else {
            worker.event.post()
        }
    }

    /// The calling thread's context pointer as bits (0: it has none yet).
    private static var callerIdentity: UInt {
        UInt(bitPattern: ThreadControl.contextPointer)
    }
}
