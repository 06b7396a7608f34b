import Synchronization

extension DispatchQueue {
    /// Calls `work` for every index in `0..<iterations`, in parallel on the pool, and
    /// returns when all calls have returned. The caller runs iterations too;
    /// parallelism is bounded by the workers that may run the caller's QoS, so
    /// there is never more than one call per worker.
    ///
    /// Cost: one node per helper worker; no allocation per iteration.
    public static func concurrentPerform(iterations: Int, execute work: (Int) -> Void) {
        if iterations <= 0 { return }
        if iterations == 1 {
            work(0)
            return
        }
        let context = ThreadContext.current
        let priority = context.propagatedPriority.level == .unspecified
            ? QoSPriority(.default) : context.propagatedPriority
        let configuration = Runtime.current.configuration
        let bandWorkers = priority.level >= .default
            ? configuration.workers - configuration.lowQoSWorkers : configuration.lowQoSWorkers
        // One participant per core at most (the caller is one): more threads than
        // cores only take turns on them.
        let participants = min(bandWorkers, configuration.cores, iterations)
        let helpers = max(participants - 1, 0)
        withoutActuallyEscaping(work) { escapable in
            let state = PerformState(iterations: iterations, participants: helpers + 1, work: escapable)
            let root = DispatchQueue.global(qos: priority.level.qosClass)
            for _ in 0..<helpers {
                let node = RuntimeParts.withPool {
                    $0.allocate(kind: .block, priority: priority, block: { state.help() }, context: context)
                }
                root.push(node)
            }
            state.help()
            state.waitAndClose()
        }
    }
}

/// Shared by the caller and the helpers of one `concurrentPerform`.
// @unchecked Sendable: `work`, `completed` and `active` under `lock`; `next` is atomic.
private final class PerformState: @unchecked Sendable {
    private let iterations: Int
    /// Indices claimed per atomic operation: about 16 claims per participant, so
    /// the shared counter is touched rarely and the last claims still balance.
    private let chunk: Int
    private let next = Atomic<Int>(0)
    private let lock = FutexLock()
    private let finished = FutexEvent()
    /// Lent by the caller; nil once the caller has returned (late helpers skip).
    private var work: ((Int) -> Void)?
    private var completed = 0
    private var active = 0

    init(iterations: Int, participants: Int, work: @escaping (Int) -> Void) {
        self.iterations = iterations
        chunk = max(1, iterations / (participants * 16))
        self.work = work
    }

    deinit {
        lock.deallocate()
        finished.deallocate()
    }

    func help() {
        guard let done = runIterations() else { return }
        lock.lock()
        active -= 1
        completed += done
        let wake = completed == iterations && active == 0
        lock.unlock()
        if wake { finished.post() }
    }

    /// Claims and runs iterations until none is left; returns how many it ran, or nil
    /// when the caller has already returned. Its copy of `work` is released on return,
    /// before `help` drops `active`.
    @inline(never)
    private func runIterations() -> Int? {
        lock.lock()
        guard let work else {
            lock.unlock()
            return nil
        }
        active += 1
        lock.unlock()
        var done = 0
        while true {
            let start = next.wrappingAdd(chunk, ordering: .relaxed).oldValue
            if start >= iterations { break }
            let end = min(start + chunk, iterations)
            for index in start..<end { work(index) }
            done += end - start
        }
        return done
    }

    /// Waits until every iteration has returned and no helper holds `work`, then
    /// takes `work` back so that late helpers never call it.
    func waitAndClose() {
        while true {
            let seen = finished.snapshot
            lock.lock()
            if completed == iterations && active == 0 {
                work = nil
                lock.unlock()
                return
            }
            lock.unlock()
            _ = finished.wait(ifUnchangedFrom: seen)
        }
    }
}
