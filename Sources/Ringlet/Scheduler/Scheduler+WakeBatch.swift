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
/// Each thread batches on its own (`ThreadContext.batchedWakes`): the manager for a
/// reap, a worker for the window of its band's timers it fires (Scheduler+BandTimers.swift).
extension Scheduler {
    /// The calling thread's pushes from now on wake their workers only at
    /// `endWakeBatch()`. Batches do not nest.
    func beginWakeBatch() {
        ThreadContext.current.batchingWakes = true
    }

    /// Wakes the workers the batch's pushes chose: `wake` each (by default at once).
    func endWakeBatch(_ wake: (Worker) -> Void = { $0.event.post() }) {
        let context = ThreadContext.current
        context.batchingWakes = false
        for worker in context.batchedWakes { wake(worker) }
        context.batchedWakes.removeAll(keepingCapacity: true)
    }

    /// The workers the calling thread's batch will wake (tests).
    var batchedWakes: [Worker] { ThreadContext.current.batchedWakes }

    /// Wakes `worker` now, or at the end of the calling thread's batch.
    @inline(__always)
    func post(_ worker: Worker) {
        if let raw = ThreadControl.contextPointer {
            let batched = Unmanaged<ThreadContext>.fromOpaque(raw)._withUnsafeGuaranteedRef { context -> Bool in
                guard context.batchingWakes else { return false }
                context.batchedWakes.append(worker)
                return true
            }
            if batched { return }
        }
        worker.event.post()
    }
}
