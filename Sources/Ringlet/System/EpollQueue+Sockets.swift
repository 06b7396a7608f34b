import CRinglet

// Socket requests on epoll (manager thread only), answered as io_uring answers them:
//
//   attempt --made at once--> done (the result, or the call's error)
//           --EAGAIN--> waits for readiness (a `Waiter`), then attempt again
//   connect --EINPROGRESS--> waits until writable, then SO_ERROR is the result
//   accept, multishot --accepted--> a completion with IORING_CQE_F_MORE, and accept again
//
// Sockets Ringlet makes are non-blocking, and every call here passes MSG_DONTWAIT or
// takes a non-blocking listener, so the manager never blocks in one.

extension EpollQueue {
    /// Connections one multishot accept takes before the manager's loop goes round.
    static let acceptsPerTurn = 64

    /// A socket request, and whether its connect is under way (EINPROGRESS seen).
    struct SocketWork {
        let call: SocketCall
        let userData: UInt64
        var connecting = false
    }

    func attempt(_ work: SocketWork) {
        let result: Int64
        switch work.call {
        case .accept(let fd, let multishot):
            for _ in 0..<Self.acceptsPerTurn {
                let accepted = rl_socket_accept_now(fd)
                if accepted == -Errno.tryAgain.rawValue { return wait(work) }
                if accepted < 0 || !multishot {
                    post(work.userData, accepted)  // an error ends a multishot accept, as on io_uring
                    return
                }
                post(work.userData, accepted, flags: RL_CQE_F_MORE)
            }
            // A flood: the rest on the next turn, after the manager's other work (the
            // set is edge-triggered, so it would not report the backlog again).
            queue(.socket(work))
            return
        case .connect(let fd, let address, let length):
            if work.connecting {
                result = Int64(rl_socket_connect_result(fd))
            } else {
                let started = rl_socket_connect_now(fd, address, length)
                if started == -Errno.inProgress.rawValue {
                    var later = work
                    later.connecting = true
                    return wait(later)
                }
                result = Int64(started)
            }
        case .receive(let fd, let message):
            result = rl_socket_recvmsg_now(fd, message)
        case .send(let fd, let message):
            result = rl_socket_sendmsg_now(fd, message)
        case .receiveProvided:
            result = Int64(-Errno.notSupported.rawValue)  // the engine reads into its free list here
        }
        if result == Int64(-Errno.tryAgain.rawValue) { return wait(work) }
        post(work.userData, Int32(truncatingIfNeeded: result))
    }

    /// Waits for the socket's readiness; the call is made again then. The call has just
    /// found the socket not ready, so only a later wake-up matters (`justTried`).
    private func wait(_ work: SocketWork) {
        addWaiter(fd: work.call.fd, Waiter(userData: work.userData, events: work.call.events, kind: .socket(work)),
                  justTried: true)
    }
}
