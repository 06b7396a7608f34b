import Synchronization

extension DispatchSource {
    /// Registers the source (with the manager thread for kernel events and timers)
    /// and starts its handlers. A no-op when already active.
    func activateSource() {
        if lock.withLock({ activated }) { return }
        // Nodes are taken here, on the caller's thread, where waiting for a full pool
        // is allowed; the manager and signal paths then never wait.
        let delivery = makeNode { [self] in deliver() }
        let final = makeNode { [self] in finish() }
        let registered = lock.withLock { registrationHandler }.map { handler in makeNode { handler.run() } }
        let submitted: Bool = lock.withLock {
            if activated { return false }
            activated = true
            spare = delivery
            finalNode = final
            registrationNode = registered
            return true
        }
        if !submitted {
            release(delivery)
            release(final)
            if let registered { release(registered) }
            return
        }
        manager.claimSourceCapacity(for: self)
        // User data is registered at once: its registration handler is queued before
        // any event can be.
        if !needsManager && !isCancelled { registeredWithKernel() }
        // The delivery node is in place: events may now take it. Before the queue is
        // activated, so that a finish() queued by a concurrent cancel() finds the node
        // free to release (it would otherwise think a delivery owns it, and leak it).
        deliveryQueued.store(false, ordering: .releasing)
        deliverPendingData()
        queue.activate()
        if isCancelled {
            unregistered()
        } else if needsManager {
            manager.submit(.register(self))
        }
    }

    /// The kernel side is armed (for user data: at once): the registration handler
    /// runs, before any event handler. Called once, by the manager or `activate()`.
    func registeredWithKernel() {
        if let node = lock.withLock({ () -> WorkNodeRef? in
            let node = registrationNode
            registrationNode = nil
            return node
        }) {
            enqueue(node)
        }
    }

    func resumeSource() {
        // GCD: on an inactive source, resume() undoes a suspend() made while inactive,
        // and activates only when there is none to undo.
        if !lock.withLock({ activated }) && queue.lock.withLock({ queue.suspendCount == 0 }) {
            activateSource()
            return
        }
        queue.resume()
    }

    func setSourceTarget(_ target: DispatchQueue) {
        queue.setTarget(queue: target)
        lock.withLock { targetLabel = target.label }
        updateEventPriority()
    }

    /// Stops the source: no event handler starts after this returns, and the cancel
    /// handler runs once the kernel side is gone and the last event handler has
    /// returned. Cancelling twice is harmless.
    public func cancel() {
        if cancelled.exchange(true, ordering: .acquiringAndReleasing) { return }
        let active = lock.withLock { activated }
        guard active else { return }  // `activate()` finishes the cancellation
        if needsManager {
            manager.submit(.cancel(self))
        } else {
            unregistered()
        }
    }

    /// Timers and kernel events need the manager thread; user data never does.
    var needsManager: Bool {
        switch kind {
        case .dataAdd, .dataOr, .dataReplace: return false
        default: return true
        }
    }

    var manager: ManagerThread { RuntimeParts.shared.manager.takeUnretainedValue() }

    /// The kernel side is gone (or there never was one): the cancel handler may run.
    /// Called once, from the manager thread or from `cancel()`/`activate()`.
    func unregistered() {
        let node = lock.withLock { () -> WorkNodeRef? in
            let node = finalNode
            finalNode = nil
            return node
        }
        guard let node else { return }
        enqueue(node)
    }

    /// Pushes one of the source's nodes to its queue at the handlers' current QoS.
    func enqueue(_ node: WorkNodeRef) {
        node.pointee.priority = QoSPriority(packed: eventPriority.load(ordering: .relaxed))
        ThreadContext.withCurrent { $0.counters.countSubmitted(node.pointee.priority.level) }
        queue.push(node)
    }

    /// Runs on the source's queue after every delivery pushed before it: the cancel
    /// handler, then the handlers are dropped (they often capture the source).
    private func finish() {
        finished.store(true, ordering: .releasing)
        manager.releaseSourceCapacity()
        // Take the delivery node unless a delivery owns it; that delivery, running
        // after this, sees `finished` and lets its node go.
        if deliveryQueued.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged,
           let node = spare {
            spare = nil
            release(node)
        }
        let unused = lock.withLock { () -> WorkNodeRef? in
            let node = registrationNode
            registrationNode = nil
            return node
        }
        if let unused { release(unused) }
        let handler = lock.withLock { () -> Handler? in
            let handler = cancelHandler
            cancelHandler = nil
            eventHandler = nil
            registrationHandler = nil
            return handler
        }
        handler?.run()
    }

    /// A node for this source's queue at the handlers' QoS (not yet counted as submitted).
    func makeNode(_ body: @escaping () -> Void) -> WorkNodeRef {
        let priority = QoSPriority(packed: eventPriority.load(ordering: .relaxed))
        return RuntimeParts.withPool { $0.allocate(kind: .block, priority: priority, block: body) }
    }

    func release(_ node: WorkNodeRef) {
        ThreadContext.withCurrent { context in RuntimeParts.withPool { $0.release(node, context: context) } }
    }
}
