import Synchronization

/// The manager thread's side of sockets: it issues each request on the ring, reads its
/// completions and hands each result to the request's handler (SocketRequest.swift).
/// Everything here runs on the manager thread except the entry points marked "any
/// thread", which only post requests.
///
/// - **Not ready.** A request answered EAGAIN (a non-blocking socket on kernels that
///   honour it) waits for readiness with a one-shot poll in the same slot, then goes
///   again; the epoll backend does that itself (EpollQueue+Sockets.swift).
/// - **Transient errors** (EINTR, ECANCELED not asked for) are retried up to
///   `retryLimit` times in a row.
/// - **Accept** keeps accepting: a multishot request that ends is issued again; a
///   kernel without multishot accept (EINVAL) gets one request per connection. Errors
///   that belong to one connection that went away before it was taken (ECONNABORTED,
///   EPROTO: accept(2), "Error handling") are skipped and counted. Out of descriptors or
///   memory, the handler hears it and the accept waits `acceptBackoff` before it goes
///   again, instead of spinning on a backlog it cannot take.
/// - **Closing** cancels every request of the socket and closes the descriptor when
///   the last one is back.
///
/// A request's user data is tag | generation (24 bits) | slot (32 bits), so a
/// completion for a slot reused since is recognised and dropped.
// @unchecked Sendable: its state is the manager thread's; other threads only post requests.
final class SocketEngine: @unchecked Sendable {
    static let retryLimit = 8
    /// How long an accept waits after EMFILE, ENFILE, ENOBUFS or ENOMEM.
    static let acceptBackoff: UInt64 = 100_000_000

    unowned(unsafe) var manager: ManagerThread!
    var slots: [SocketRequest?] = []
    var freeSlots: [Int] = []
    var generation: UInt32 = 0
    // Statistics: written by the manager, read by any thread.
    let inFlightCount = Atomic<Int>(0)
    let inFlightPeak = Atomic<Int>(0)
    /// Connections that went away before accept took them (skipped, as accept(2) says).
    let acceptsSkipped = Atomic<Int>(0)
    /// The receive buffers of continuous receives: `ioBufferBytes` / 16 in 16 KiB
    /// buffers, a power of two from 8 to 4096 of them, allocated here (untouched pages
    /// cost no memory) and handed to the kernel by the first continuous receive.
    let buffers: ProvidedBuffers
    var bufferRingTried = false
    /// Continuous receives waiting for a buffer to come back.
    var waitingForBuffers: [SocketRequest] = []
    /// Multishot receives work here (cleared on the first EINVAL: Linux 5.19 has buffer
    /// rings but multishot receives came with 6.0).
    var multishotReceives = true

    static let receiveBufferBytes = 16 * 1024

    init(configuration: RuntimeConfiguration) {
        var count = 8
        while count < 4096 && (count * 2) * Self.receiveBufferBytes <= configuration.ioBufferBytes / 16 { count *= 2 }
        buffers = ProvidedBuffers(count: count, size: Self.receiveBufferBytes)
        buffers.returned = { [unowned(unsafe) self] in  // the engine lives as long as the process
            manager.submit(.run { [self] in resumeBufferWaiters($0) })
        }
    }

    // MARK: Any thread

    func start(_ request: SocketRequest) { manager.submit(.run { [self] in begin(request, $0) }) }
    func cancel(_ request: SocketRequest) { manager.submit(.run { [self] in cancel(request, $0) }) }
    func close(_ socket: RingSocket, then handler: (DispatchQueue?, () -> Void)?) {
        manager.submit(.run { [self] in close(socket, handler, $0) })
    }

    // MARK: Manager

    private func begin(_ request: SocketRequest, _ ring: Ring) {
        let socket = request.socket
        if socket.closing.load(ordering: .acquiring) || request.cancelRequested.load(ordering: .acquiring) {
            end(request, -Errno.cancelled.rawValue)
            return
        }
        switch request.work {
        case .send, .shutdown:
            socket.sendLane.append(request)
            if socket.sendLane.count == 1 { issue(request, ring) }
        case .receive, .receiveStream:
            socket.receiveLane.append(request)
            if socket.receiveLane.count == 1 { issue(request, ring) }
        case .accept, .connect:
            socket.others.append(request)
            issue(request, ring)
        }
    }

    /// Gives the request a slot and queues its call on the ring. A shutdown is made here:
    /// shutdown(2) never blocks, and the ring's IORING_OP_SHUTDOWN never completes inline
    /// (the kernel hands every one to an io-wq worker thread it starts for the process).
    private func issue(_ request: SocketRequest, _ ring: Ring) {
        if case .shutdown(let how) = request.work {
            finish(request, SocketCalls.shutdown(request.socket.fileDescriptor, how: how), ring)
            return
        }
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = slots.count
            slots.append(nil)
        }
        generation &+= 1
        request.slot = slot
        request.generation = generation
        request.polling = false
        slots[slot] = request
        request.socket.inFlight += 1
        let now = inFlightCount.load(ordering: .relaxed) + 1
        inFlightCount.store(now, ordering: .relaxed)
        if now > inFlightPeak.load(ordering: .relaxed) { inFlightPeak.store(now, ordering: .relaxed) }
        prepare(request, ring)
    }

    private func prepare(_ request: SocketRequest, _ ring: Ring) {
        if case .receiveStream(let message) = request.work {
            if let id = request.bufferID {  // going again (after EAGAIN, EINTR): a fresh take
                request.bufferID = nil
                buffers.give(id)
            }
            if !bufferRingTried {
                bufferRingTried = true
                _ = buffers.register(on: ring)  // refused (epoll, before 5.19): the free list serves
            }
            request.provided = buffers.ring != nil
            request.multishot = request.provided && multishotReceives
            if !request.provided {
                if !request.readable {  // a buffer only for a socket with bytes to read
                    pollReadiness(request, ring)
                    return
                }
                guard let id = buffers.take() else {
                    waitForBuffer(request)
                    return
                }
                request.bufferID = id
                message.reset()
                message.add(buffers.pointer(id), count: buffers.size)
            }
        }
        let data = userData(.socket, request)
        manager.retrying(ring) { () throws(Errno) in try ring.prepareSocket(request.call, userData: data) }
    }

    /// Waits for the request's readiness with a one-shot poll in its slot; its
    /// completion issues the call again (`completed`).
    private func pollReadiness(_ request: SocketRequest, _ ring: Ring) {
        request.polling = true
        let data = userData(.socketPoll, request)
        manager.retrying(ring) { () throws(Errno) in
            try ring.preparePoll(fd: request.socket.fileDescriptor, events: request.call.events, multishot: false,
                                 userData: data)
        }
    }

    private func userData(_ tag: ManagerThread.Tag, _ request: SocketRequest) -> UInt64 {
        tag.rawValue << 56 | UInt64(request.generation & 0xFF_FFFF) << 32
            | UInt64(UInt32(truncatingIfNeeded: request.slot))
    }

    /// The slot's request leaves the ring (its completion ended it, or it backs off).
    private func release(_ request: SocketRequest) {
        guard request.slot >= 0 else { return }
        slots[request.slot] = nil
        freeSlots.append(request.slot)
        request.slot = -1
        request.socket.inFlight -= 1
        inFlightCount.store(inFlightCount.load(ordering: .relaxed) - 1, ordering: .relaxed)
    }

    func completed(_ completion: Ring.Completion, _ ring: Ring) {
        let slot = Int(completion.userData & 0xFFFF_FFFF)
        let generation = UInt32((completion.userData >> 32) & 0xFF_FFFF)
        guard slot < slots.count, let request = slots[slot], request.generation & 0xFF_FFFF == generation else { return }
        let cancelled = request.cancelRequested.load(ordering: .acquiring)
        let result = completion.result
        if request.polling {
            // Readiness after EAGAIN: the call goes again, unless the poll failed.
            request.polling = false
            if result >= 0 && !cancelled {
                request.readable = true
                prepare(request, ring)
                return
            }
            finish(request, result >= 0 ? -Errno.cancelled.rawValue : result, ring)
            return
        }
        if result == -Errno.tryAgain.rawValue {
            if let id = request.bufferID {  // not held while the socket is not ready
                request.bufferID = nil
                buffers.give(id)
            }
            if cancelled {
                finish(request, -Errno.cancelled.rawValue, ring)
            } else {
                pollReadiness(request, ring)
            }
            return
        }
        if (result == -Errno.interrupted.rawValue || result == -Errno.cancelled.rawValue) && !cancelled
            && request.retries < Self.retryLimit {
            request.retries += 1
            prepare(request, ring)
            return
        }
        request.retries = 0
        switch request.work {
        case .accept:
            accepted(request, result, more: completion.hasMore, cancelled: cancelled, ring)
        case .receiveStream:
            received(request, completion, cancelled: cancelled, ring)
        case .send(let message, _):
            if result > 0 {
                request.sent += Int(result)
                message.consume(Int(result))
                if request.socket.kind == .stream && message.remaining > 0 {
                    if cancelled {  // the cancel found nothing on the ring: it ends here
                        finish(request, -Errno.cancelled.rawValue, ring)
                        return
                    }
                    message.dropControl()  // it went with the first bytes
                    prepare(request, ring)
                    return
                }
            } else if result == 0 && message.remaining > 0 {
                finish(request, -Errno.ioError.rawValue, ring)  // would spin
                return
            }
            finish(request, result < 0 ? result : 0, ring)
        case .connect, .receive, .shutdown:
            finish(request, result, ring)
        }
    }

    private func accepted(_ request: SocketRequest, _ result: Int32, more: Bool, cancelled: Bool, _ ring: Ring) {
        if result >= 0 {
            request.deliver(request, result, false)  // a connection is never dropped, even once cancelled
            if more { return }
            if cancelled {
                finish(request, -Errno.cancelled.rawValue, ring)
            } else {
                prepare(request, ring)  // one-shot, or the kernel ended the multishot
            }
            return
        }
        if cancelled {
            finish(request, result, ring)
            return
        }
        let errno = Errno(negated: result)
        switch errno.rawValue {
        case Errno.invalidArgument.rawValue where request.multishot:
            // No multishot accept in this kernel (before 5.19): one request per
            // connection. EINVAL again then says the socket does not listen.
            request.multishot = false
            prepare(request, ring)
        case Errno.connectionAborted.rawValue, 71 /* EPROTO */, 100 /* ENETDOWN */, 92 /* ENOPROTOOPT */,
             112 /* EHOSTDOWN */, 64 /* ENONET */, 113 /* EHOSTUNREACH */, 101 /* ENETUNREACH */:
            acceptsSkipped.wrappingAdd(1, ordering: .relaxed)
            prepare(request, ring)
        case Errno.tooManyOpenFiles.rawValue, Errno.tooManyOpenFilesInSystem.rawValue,
             Errno.noBufferSpace.rawValue, Errno.noMemory.rawValue:
            request.deliver(request, result, false)
            release(request)
            request.backoff = manager.armTimer(
                deadline: MonotonicClock.nanoseconds + Self.acceptBackoff, wall: false, interval: 0,
                leeway: Self.acceptBackoff / 10, owner: .action({ [self] in
                    request.backoff = nil
                    guard let ring = manager.ringForSources else { return }
                    if request.cancelRequested.load(ordering: .acquiring) || request.socket.closing.load(ordering: .acquiring) {
                        end(request, -Errno.cancelled.rawValue)
                    } else {
                        issue(request, ring)
                    }
                }))
        default:
            finish(request, result, ring)
        }
    }

    /// A continuous receive's result: bytes in a buffer (delivered, and the receive goes
    /// on), the end of the stream, no buffer free (it waits for one), or a failure.
    private func received(_ request: SocketRequest, _ completion: Ring.Completion, cancelled: Bool, _ ring: Ring) {
        let result = completion.result
        var id = request.bufferID
        request.bufferID = nil
        if request.provided && completion.flags & SocketCalls.bufferFlag != 0 {
            let picked = UInt16(truncatingIfNeeded: completion.flags >> SocketCalls.bufferShift)
            buffers.taken(picked)
            id = picked
        }
        if result > 0, let id {
            // A full buffer: more is likely waiting, so the next receive needs no poll first.
            request.readable = Int(result) == buffers.size
            request.deliveredBuffer = id
            request.deliver(request, result, false)
            request.deliveredBuffer = nil
            if request.provided && completion.hasMore { return }
            if cancelled {
                finish(request, -Errno.cancelled.rawValue, ring)
            } else {
                prepare(request, ring)  // the next receive, or the multishot again
            }
            return
        }
        if let id { buffers.give(id) }
        if result == -Errno.invalidArgument.rawValue && request.provided && request.multishot && !cancelled {
            multishotReceives = false  // Linux 5.19: one receive per buffer
            prepare(request, ring)
            return
        }
        if result == -Errno.noBufferSpace.rawValue && request.provided && !cancelled {
            if buffers.waitForOne() { waitForBuffer(request) } else { prepare(request, ring) }
            return
        }
        finish(request, result > 0 ? -Errno.ioError.rawValue : result, ring)  // 0: the end of the stream
    }

    /// A continuous receive leaves the ring until a buffer comes back (`resumeBufferWaiters`).
    private func waitForBuffer(_ request: SocketRequest) {
        release(request)
        waitingForBuffers.append(request)
    }

    /// A buffer came back: the receives that waited go again (or end, if cancelled meanwhile).
    private func resumeBufferWaiters(_ ring: Ring) {
        let waiting = waitingForBuffers
        waitingForBuffers = []
        for request in waiting where !request.ended {
            if request.cancelRequested.load(ordering: .acquiring) || request.socket.closing.load(ordering: .acquiring) {
                finish(request, -Errno.cancelled.rawValue, ring)
            } else {
                issue(request, ring)
            }
        }
    }

    /// The request's last result: out of its slot and its lane, the next in the lane goes.
    private func finish(_ request: SocketRequest, _ result: Int32, _ ring: Ring) {
        release(request)
        end(request, result)
        let socket = request.socket
        switch request.work {
        case .send, .shutdown:
            if socket.sendLane.first === request {
                socket.sendLane.removeFirst()
                if let next = socket.sendLane.first { issue(next, ring) }
            }
        case .receive, .receiveStream:
            if socket.receiveLane.first === request {
                socket.receiveLane.removeFirst()
                if let next = socket.receiveLane.first { issue(next, ring) }
            }
        case .accept, .connect:
            break
        }
        if socket.closeRequested && socket.inFlight == 0 { closeDescriptor(socket) }
    }

    /// Hands the final result to the handler, once; the request leaves its socket's lists.
    private func end(_ request: SocketRequest, _ result: Int32) {
        if request.ended { return }
        request.ended = true
        let socket = request.socket
        socket.others.removeAll { $0 === request }
        request.deliver(request, result, true)
    }

    private func cancel(_ request: SocketRequest, _ ring: Ring) {
        if request.ended { return }
        let socket = request.socket
        if let backoff = request.backoff {
            request.backoff = nil
            _ = manager.disarmTimer(backoff)
            end(request, -Errno.cancelled.rawValue)
            return
        }
        if request.slot >= 0 {
            let target = userData(request.polling ? .socketPoll : .socket, request)
            manager.retrying(ring) { () throws(Errno) in
                try ring.prepareCancel(target: target, userData: ManagerThread.Tag.socketCancel.rawValue << 56)
            }
            return  // it ends when its completion comes
        }
        if let index = waitingForBuffers.firstIndex(where: { $0 === request }) {
            waitingForBuffers.remove(at: index)
            finish(request, -Errno.cancelled.rawValue, ring)
            return
        }
        // Waiting for its turn in a lane (or not begun: `begin` sees the flag).
        if let index = socket.sendLane.firstIndex(where: { $0 === request }) {
            socket.sendLane.remove(at: index)
        } else if let index = socket.receiveLane.firstIndex(where: { $0 === request }) {
            socket.receiveLane.remove(at: index)
        } else {
            return
        }
        end(request, -Errno.cancelled.rawValue)
    }

    private func close(_ socket: RingSocket, _ handler: (DispatchQueue?, () -> Void)?, _ ring: Ring) {
        socket.closeHandler = handler.map { (queue: $0.0, body: $0.1) }
        socket.closeRequested = true
        // Waiting ones first (they end now), then those on the ring.
        for request in socket.sendLane.dropFirst() + socket.receiveLane.dropFirst() {
            request.cancelRequested.store(true, ordering: .releasing)
            cancel(request, ring)
        }
        for request in socket.others + socket.sendLane.prefix(1) + socket.receiveLane.prefix(1) {
            request.cancelRequested.store(true, ordering: .releasing)
            cancel(request, ring)
        }
        if socket.inFlight == 0 { closeDescriptor(socket) }
    }

    private func closeDescriptor(_ socket: RingSocket) {
        if socket.descriptorClosed { return }
        socket.descriptorClosed = true
        Descriptors.close(socket.fileDescriptor)
        guard let (queue, body) = socket.closeHandler else { return }
        socket.closeHandler = nil
        let work = UncheckedSendable(body)
        (queue ?? DispatchQueue.global()).async { work.value() }
    }
}
