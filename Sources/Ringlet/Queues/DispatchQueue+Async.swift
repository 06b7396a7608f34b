extension DispatchQueue {
    /// Submits `work` to run once, asynchronously, at the QoS GCD's rules give it (see
    /// `resolvePriority`). With `group`, the group is entered now and left when
    /// `work` returns. `.barrier` runs it alone on a concurrent queue (ignored on
    /// global queues, as in GCD).
    ///
    /// Cost: one node from the fixed pool plus the closure's context; waits (without
    /// dropping anything) when the pool is full.
    public func async(group: DispatchGroup? = nil, qos: DispatchQoS = .unspecified,
                      flags: DispatchWorkItemFlags = [], execute work: consuming @escaping @Sendable () -> Void) {
        submitBlock(group.map { Unmanaged.passUnretained($0) }, qos: qos, flags: flags, work)
    }

    /// `async(group:qos:flags:execute:)` for a group that is not optional, which a
    /// caller holding one (`queue.async(group: group) { … }`) reaches first. With
    /// only `DispatchGroup?`, the caller turned its group into an optional for each
    /// call, a copy: a retain before and a release after, two locked writes to the
    /// group's header per item, a large part of the cost of `async(group:)` in a loop
    /// (Measuring, "The group row: the caller's copy").
    public func async(group: DispatchGroup, qos: DispatchQoS = .unspecified,
                      flags: DispatchWorkItemFlags = [], execute work: consuming @escaping @Sendable () -> Void) {
        submitBlock(Unmanaged.passUnretained(group), qos: qos, flags: flags, work)
    }

    /// The body of both: enters the group, takes a node and pushes it. The group comes
    /// through `Unmanaged`: as a plain `DispatchGroup` it was retained and released
    /// around its two uses here, two more writes to its header for every item.
    @inline(__always)
    private func submitBlock(_ group: Unmanaged<DispatchGroup>?, qos: DispatchQoS, flags: DispatchWorkItemFlags,
                             _ work: consuming @escaping @Sendable () -> Void) {
        group?._withUnsafeGuaranteedRef { $0.enterForClosure() }
        let node = ThreadContext.withCurrent { context in
            let detached = flags.contains(.detached)
            let priority = Importance.admitted(resolvePriority(for: context.propagatedPriority, flags: flags, itemQoS: qos),
                                               context: context, exempt: isImportanceExempt, detached: detached)
            context.counters.countSubmitted(priority.level)
            context.traceEnqueued(queueNumber: number, priority)
            return RuntimeParts.withPool { pool in
                pool.allocate(kind: .block, priority: priority, isBarrier: flags.contains(.barrier) && !isRoot,
                              block: nil, context: context, detached: detached)
            }
        }
        if let group { WorkNode.setBlockGroup(group, of: node) }
        // Moved in here, outside the closures above: a closure may only copy what it
        // captures, and the copy costs a retain here and a release in the caller.
        node.pointee.block = consume work
        push(node)
    }

    /// Submits a work item; its QoS and flags decide how it runs. An item may be
    /// submitted more than once; `wait()` and `notify` refer to its first run.
    public func async(execute workItem: DispatchWorkItem) {
        submit(workItem, group: nil)
    }

    /// Submits a work item as part of `group`.
    public func async(group: DispatchGroup, execute workItem: DispatchWorkItem) {
        submit(workItem, group: group)
    }

    func submit(_ workItem: DispatchWorkItem, group: DispatchGroup?) {
        push(makeWorkItemNode(workItem, group: group))
    }

    /// The node for one submission of `workItem` to this queue (QoS resolved, group
    /// entered, submission counted); the caller pushes it.
    func makeWorkItemNode(_ workItem: DispatchWorkItem, group: DispatchGroup?) -> WorkNodeRef {
        let context = ThreadContext.current
        let submitter = workItem.flags.contains(.assignCurrentContext)
            ? workItem.capturedPriority : context.propagatedPriority
        let detached = workItem.flags.contains(.detached)
        let priority = Importance.admitted(resolvePriority(for: submitter, flags: workItem.flags, itemQoS: workItem.qos),
                                           context: context, exempt: isImportanceExempt, detached: detached)
        group?.enter()
        context.counters.countSubmitted(priority.level)
        context.traceEnqueued(queueNumber: number, priority)
        let ticket = workItem.willEnqueue(on: self, priority: priority)
        let node = RuntimeParts.withPool {
            $0.allocate(kind: .workItem, priority: priority, isBarrier: workItem.flags.contains(.barrier) && !isRoot,
                        object: workItem, group: group, context: context, detached: detached)
        }
        node.pointee.ticket = ticket
        if workItem.capturedCrumb != 0 {
            // The captured activity, with the boost mark (and its reference) of now.
            let mark = node.pointee.crumb & Importance.boostBit
            node.pointee.crumb = workItem.capturedCrumb & ~Importance.boostBit | mark
        }
        return node
    }

    /// The QoS an item runs at on this queue (GCD's rules; PortingFromDispatch in the docs):
    ///
    /// 1. The item's own QoS: `.noQoS` → none; an explicit QoS; else, unless
    ///    `.detached`, the submitter's (already with userInteractive → userInitiated).
    /// 2. The queue's QoS (its own, else its target chain's; the default global
    ///    queue has none): without `.enforceQoS` the queue's wins when it has one;
    ///    with `.enforceQoS` the higher of the two wins.
    /// 3. Nothing at all runs at default.
    func resolvePriority(for submitter: QoSPriority, flags: DispatchWorkItemFlags,
                         itemQoS: DispatchQoS) -> QoSPriority {
        var item: QoSPriority
        if flags.contains(.noQoS) {
            item = QoSPriority(.unspecified)
        } else if itemQoS.qosClass != .unspecified {
            item = QoSPriority(itemQoS)
        } else if flags.contains(.detached) {
            item = QoSPriority(.unspecified)
        } else {
            item = submitter
        }
        let queue = floorPriority
        var resolved: QoSPriority
        if queue.level == .unspecified {
            resolved = item
        } else if flags.contains(.enforceQoS) {
            resolved = max(item, queue)
        } else {
            resolved = queue
        }
        if resolved.level == .unspecified { resolved = QoSPriority(.default) }
        return resolved
    }
}
