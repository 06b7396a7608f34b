/// The text printed to stderr when every pool thread is blocked while work is
/// pending: each pool thread with what it waits on and the queue it was running,
/// then the queues and QoS levels that hold pending work.
enum DeadlockReport {
    /// Invoked with the scheduler lock held.
    static func make(workers: [Worker], runQueues: RunQueues) -> String {
        var text = "Ringlet deadlock report\n"
        text += "  pool threads (\(workers.count)):\n"
        for worker in workers {
            let context = worker.context
            let waits = context?.blockedOn?.description ?? "(not blocked)"
            var line = "    \(worker.name) [\(worker.band.name)] waits on \(waits)"
            if let queue = context?.currentQueue {
                line += ", running work of queue '\(queue.label)'"
            }
            text += line + "\n"
        }
        text += "  pending work:\n"
        var any = false
        for worker in workers {
            if let queue = worker.context?.currentQueue, queue.hasPendingWork {
                text += "    queue '\(queue.label)': \(queue.pendingCount) item(s) waiting behind \(worker.name)\n"
                any = true
            }
        }
        var looseItems = Array(repeating: 0, count: QoSLevel.count)
        runQueues.forEach { node in
            if node.pointee.kind == .queueToken, let object = node.pointee.object {
                let queue = unsafeDowncast(object, to: DispatchQueue.self)
                text += "    queue '\(queue.label)': \(queue.pendingCount) item(s), waiting for a thread at "
                    + "\(node.pointee.priority.level.name)\n"
            } else {
                looseItems[node.pointee.priority.level.rawValue] += 1
            }
            any = true
        }
        for level in QoSLevel.allLevels where looseItems[level.rawValue] > 0 {
            text += "    global queue at \(level.name): \(looseItems[level.rawValue]) item(s)\n"
        }
        if !any { text += "    (none found)\n" }
        return text
    }
}
