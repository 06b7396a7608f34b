import Glibc
@_spi(RingletNet) import Ringlet

extension ServiceSession {
    /// One `recvmsg` at a time, with room for the sender's credentials: a packet over
    /// the size limit arrives truncated and ends the session. The completion is handled
    /// on the manager thread, where it arrives: parsing the header, checking the claim
    /// (three small system calls) and submitting the handler cost less than the wake-up
    /// of a worker to do it, and run before any clamped work could delay them.
    func receiveNext() {
        let room = ServiceHeader.size + options.messageBytes
        socket.receive(upTo: room, controlBytes: RingSocket.controlSpace(forBytes: 12), handlerOnManager: { [self] result in
            switch result {
            case .failure(let error):
                if !error.isCancellation { end(.socket(endpointName, error)) }
            case .success(let message):
                if message.endOfStream { return end(.peerClosed(endpoint: endpointName, peer: peer.description)) }
                if message.truncated {
                    return end(.messageTooLarge(endpoint: endpointName, bytes: room + 1, limit: options.messageBytes))
                }
                let sender = message.control.lazy.compactMap(\.credentials).first.map(ServicePeer.init) ?? peer
                if take(message.data, from: sender) { receiveNext() }
            }
        })
    }

    /// Handles one packet; false when it ended the session.
    private func take(_ packet: DispatchData, from sender: ServicePeer) -> Bool {
        let header: ServiceHeader
        switch ServiceHeader.parse(packet) {
        case .failure(let malformed):
            end(.malformed(endpoint: endpointName, peer: sender.description, reason: malformed.reason))
            return false
        case .success(let parsed):
            header = parsed
        }
        let payload = packet.subdata(in: ServiceHeader.size..<packet.count)
        switch header.kind {
        case .message, .request:
            deliver(payload, header: header, sender: sender)
        case .reply, .failure:
            answer(header, payload: payload, sender: sender)
        }
        return true
    }

    /// Runs the message handler at the granted QoS (the queue's when higher:
    /// `.enforceQoS`). In a clamped process, a message granted more than the clamp
    /// begins a boost: the handler and what it submits escape the clamp, and a request
    /// holds the boost until its reply is sent.
    private func deliver(_ payload: DispatchData, header: ServiceHeader, sender: ServicePeer) {
        let granted = SenderCheck.granted(claim: header.qos, threadID: header.threadID, processID: sender.processID)
        let message = ServiceMessage(payload: payload, header: header, granted: granted, peer: sender, session: self)
        guard let handler = messageHandlerIfAny() else {
            if message.expectsReply {
                message.unansweredReason = "the session has no message handler"
                return  // the message's deinit answers
            }
            return reportDropped()
        }
        // The handler's breadcrumb carries the sender's thread and activity.
        let submit = { [handlerQueue] in
            Runtime.submitting(fromRemoteThread: header.threadID, activity: header.activity) {
                handlerQueue.async(qos: granted, flags: .enforceQoS) { handler(message) }
            }
        }
        if let clamp = Runtime.workClamp, ServiceQoS.rank(granted) > ServiceQoS.rank(DispatchQoS(qosClass: clamp, relativePriority: 0)) {
            let boost = Runtime.beginBoost()
            if message.expectsReply { message.boost = boost }
            boost.submitBoosted(submit)
            if !message.expectsReply { boost.end() }
        } else {
            submit()
        }
    }

    /// Runs the reply handler of request `header.id` at the QoS it was sent at.
    private func answer(_ header: ServiceHeader, payload: DispatchData, sender: ServicePeer) {
        guard let pending = takePending(header.id) else {
            return end(.malformed(endpoint: endpointName, peer: sender.description,
                                  reason: "a reply to request \(header.id), which this side never sent or was answered"))
        }
        let result: Result<ServiceMessage, ServiceError>
        if header.kind == .failure {
            result = .failure(.noReply(endpoint: endpointName, reason: String(decoding: Array(payload), as: UTF8.self)))
        } else {
            let granted = SenderCheck.granted(claim: header.qos, threadID: header.threadID, processID: sender.processID)
            result = .success(ServiceMessage(payload: payload, header: header, granted: granted, peer: sender, session: self))
        }
        handlerQueue.async(qos: pending.qos) { pending.handler(result) }
    }

    private func reportDropped() {
        let first = lockedDropCount() == 1
        if first {
            serviceWarning("service session \(endpointName): a message from \(peer) arrived with no message handler set "
                + "and was dropped (call setMessageHandler before messages come; later drops are counted, not printed)")
        }
    }
}
