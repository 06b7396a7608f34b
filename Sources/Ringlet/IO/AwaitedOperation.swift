#if canImport(_Concurrency)
import _Concurrency

/// One read or write of a channel awaited by a task (DispatchIO+Async.swift): it
/// gathers what the operation's handler gets and resumes the task once, from the done
/// handler, which runs exactly once, last (`IOOperation.deliver`).
///
/// Cancelling the task ends the operation through the manager (`IOEngine.cancel`):
/// its requests are cancelled on the ring, its done handler runs with ECANCELED, and
/// only then does the task resume. So when the awaiting call returns or throws, the
/// operation is over: no handler of it runs later and nothing of it is left in the
/// engine or the channel.
///
///   waiting --(1) done handler--> resumed
///   waiting --(2) task cancelled--> cancelling --(1) done handler, ECANCELED--> resumed
///
///   (1) `handle`   (2) `cancel` (any thread; before the operation exists, `started` sends it)
// @unchecked Sendable: every field under `lock`; the continuation is taken (and resumed) once.
final class AwaitedOperation: @unchecked Sendable {
    /// What the task gets back: the bytes (a read's, or a write's unwritten rest), the
    /// errno (0: none) and whether the task's cancellation ended it.
    struct Outcome: Sendable {
        var data: DispatchData
        var error: Int32
        var cancelledByTask: Bool
    }

    private let lock = FutexLock()
    // Under `lock`:
    private var continuation: CheckedContinuation<Outcome, Never>?
    private var operation: IOOperation?
    private var collected = DispatchData.empty
    private var cancelRequested = false

    deinit { lock.deallocate() }

    /// Runs the operation `start` makes (handing it `handle` as its handler) and waits
    /// for its done handler; cancelling the task cancels the operation.
    static func run(_ start: (_ handler: @escaping IOOperation.Handler) -> IOOperation) async -> Outcome {
        let awaited = AwaitedOperation()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                // In place before the operation starts: its handler may run at once.
                awaited.lock.withLock { awaited.continuation = continuation }
                awaited.started(start { done, data, error in awaited.handle(done, data, error) })
            }
        } onCancel: {
            awaited.cancel()
        }
    }

    /// The operation exists: a cancellation that came before it is sent now. An
    /// operation whose done handler already ran (on its queue, before `start`
    /// returned it here) is not kept: nothing would clear it again, and it holds its
    /// handler, which holds this — a cycle that outlives both.
    private func started(_ started: IOOperation) {
        let cancelNow = lock.withLock { () -> Bool in
            guard continuation != nil else { return false }
            operation = started
            return cancelRequested
        }
        if cancelNow { started.channel.engine.cancel(started) }
    }

    /// The task was cancelled (any thread, once).
    private func cancel() {
        let target = lock.withLock { () -> IOOperation? in
            cancelRequested = true
            return operation
        }
        if let target { target.channel.engine.cancel(target) }
    }

    /// The operation's handler (its queue; never concurrently with itself).
    private func handle(_ done: Bool, _ data: DispatchData?, _ error: Int32) {
        let resume = lock.withLock { () -> (CheckedContinuation<Outcome, Never>, Outcome)? in
            if let data { collected.append(data) }
            guard done, let continuation else { return nil }
            self.continuation = nil
            operation = nil  // the operation holds its handler, which holds this
            let outcome = Outcome(data: collected, error: error,
                                  cancelledByTask: cancelRequested && error == Errno.cancelled.rawValue)
            collected = .empty
            return (continuation, outcome)
        }
        if let (continuation, outcome) = resume {
            continuation.resume(returning: outcome)
        }
    }
}
#endif
