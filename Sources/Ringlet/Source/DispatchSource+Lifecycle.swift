import Synchronization

extension DispatchSource {
    /// Registers the source (with the manager thread for kernel events and timers)
    /// and starts its handlers. A no-op when already active.
    func activateSource() {
        let submitted: Bool = lock.withLock {
            if activated { return false }
            activated = true
            let nodes = WorkNodeRef.allocate(capacity: NodeRole.allCases.count)
            // The handlers continue the activity of the thread that activated the source.
            let crumb = ThreadContext.current.submitCrumb
            for role in NodeRole.allCases { initializeNode(nodes + Int(role.rawValue), role, crumb: crumb) }
            ownNodes = nodes
            spare = nodes + Int(NodeRole.delivery.rawValue)
            finalNode = nodes + Int(NodeRole.final.rawValue)
            let registration = nodes + Int(NodeRole.registration.rawValue)
            if registrationHandler == nil {
                registration.deinitialize(count: 1)
            } else {
                registrationNode = registration
            }
            return true
        }
        if !submitted { return }
        manager.claimSourceCapacity(for: self)
        holdsCapacity.store(true, ordering: .releasing)
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
            releaseCapacityIfHeld()
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
        let notSuspended = queue.lock.withLock { queue.state.suspendCount == 0 }
        if notSuspended {
            if !lock.withLock({ activated }) {
                activateSource()
                return
            }
            // The source's own queue carries its target's label: name the source.
            ringletMisuse("resume() on \(name), which is not suspended (over-resume): every resume() must balance "
                + "an earlier suspend() of the source, and activate() starts it once")
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
        releaseCapacityIfHeld()
        if needsManager {
            manager.submit(.cancel(self))
        } else {
            unregistered()
        }
    }

    /// A cancelled source gives its place in the `sources` capacity back at once, not
    /// when the manager and its queue have finished it: a loop that makes, activates
    /// and cancels one source at a time stays at one (it trapped at the capacity, the
    /// cancelled ones still counted). Exactly once, whichever of `cancel()`,
    /// `activate()` (of a source cancelled before) and `finish` comes first.
    func releaseCapacityIfHeld() {
        if holdsCapacity.exchange(false, ordering: .acquiringAndReleasing) { manager.releaseSourceCapacity() }
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
    /// handler, then the handlers are dropped (they often capture the source), then
    /// the nodes that still hold the source let it go.
    private func finish(_ node: WorkNodeRef) {
        finished.store(true, ordering: .releasing)
        releaseCapacityIfHeld()
        // Take the delivery node unless a delivery owns it; that delivery, running
        // after this, sees `finished` and lets its node go.
        if deliveryQueued.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged,
           let delivery = spare {
            spare = nil
            delivery.deinitialize(count: 1)
        }
        let unused = lock.withLock { () -> WorkNodeRef? in
            let registration = registrationNode
            registrationNode = nil
            return registration
        }
        unused?.deinitialize(count: 1)
        let handler = lock.withLock { () -> Handler? in
            let handler = cancelHandler
            cancelHandler = nil
            eventHandler = nil
            registrationHandler = nil
            return handler
        }
        handler?.run()
        #if canImport(_Concurrency)
        // An events iterator ends after the cancel handler, as a handler-based source's life does.
        lock.withLock { eventStream }?.end()
        #endif
        // The node running this is the last: the drainer's reference keeps the source
        // alive until it returns.
        node.deinitialize(count: 1)
    }

    /// The role of each of a source's own nodes (kept in the node's `ticket`).
    enum NodeRole: UInt32, CaseIterable {
        /// Runs the event handler with what is pending (`deliver`).
        case delivery = 0
        /// Runs the cancel handler, last (`finish`).
        case final = 1
        /// Runs the registration handler, first.
        case registration = 2
    }

    private func initializeNode(_ node: WorkNodeRef, _ role: NodeRole, crumb: UInt64) {
        let priority = QoSPriority(packed: eventPriority.load(ordering: .relaxed))
        node.initialize(to: WorkNode(next: nil, kind: .sourceNode, isBarrier: false, priority: priority,
                                     block: nil, object: self, crumb: crumb))
        node.pointee.ticket = role.rawValue
    }

    /// Runs one of the source's nodes; called by the drainer (`NodeRunner`), which
    /// holds a reference to the source meanwhile.
    func run(_ node: WorkNodeRef) {
        switch NodeRole(rawValue: node.pointee.ticket) {
        case .delivery: deliver(node)
        case .final: finish(node)
        case .registration:
            let handler = lock.withLock { registrationHandler }
            handler?.run()
            node.deinitialize(count: 1)
        case .none: ringletBug("\(name): a node with an unknown role \(node.pointee.ticket)")
        }
    }
}
