import Synchronization

// The socket layer in the runtime's statistics and the live dump.
extension ManagerThread {
    /// (requests on the ring now, most at once, connections skipped by accepts): zeros
    /// when no socket was made.
    var socketCounts: (inFlight: Int, peak: Int, acceptsSkipped: Int, buffers: Int, buffersHeld: Int, bufferWaits: Int,
                       provided: Bool) {
        guard let engine = socketEngineIfMade else { return (0, 0, 0, 0, 0, 0, false) }
        return (engine.inFlightCount.load(ordering: .relaxed), engine.inFlightPeak.load(ordering: .relaxed),
                engine.acceptsSkipped.load(ordering: .relaxed), engine.buffers.count, engine.buffers.held,
                engine.buffers.waits.load(ordering: .relaxed), engine.buffers.providedToKernel)
    }

    /// The dump's section (manager thread): each socket with requests, what they are
    /// and which wait for readiness or for their turn.
    func socketSection() -> String {
        guard let engine = socketEngineIfMade else { return "" }
        var sockets: [RingSocket] = []
        for case let request? in engine.slots + engine.waitingForBuffers.map({ Optional($0) })
            where !sockets.contains(where: { $0 === request.socket }) {
            sockets.append(request.socket)
        }
        var text = "  sockets (\(engine.inFlightCount.load(ordering: .relaxed)) request(s) on the ring):\n"
        for socket in sockets {
            var parts: [String] = []
            for request in socket.others + socket.sendLane.prefix(1) + socket.receiveLane.prefix(1) {
                let state = request.polling ? "waiting for readiness"
                    : request.backoff != nil ? "backing off after \"refused\""
                    : engine.waitingForBuffers.contains(where: { $0 === request })
                    ? "waiting for a receive buffer (all \(engine.buffers.count) held by data not yet released)"
                    : "on the ring"
                parts.append("\(request.callName) \(state)")
            }
            let queued = max(socket.sendLane.count - 1, 0) + max(socket.receiveLane.count - 1, 0)
            if queued > 0 { parts.append("\(queued) waiting for their turn") }
            text += "    \(socket.label): " + parts.joined(separator: ", ") + "\n"
        }
        if sockets.isEmpty { text += "    (none)\n" }
        return text
    }
}
