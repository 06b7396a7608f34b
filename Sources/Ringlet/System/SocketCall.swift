import CRinglet

/// One socket request as a backend takes it (`Ring.prepareSocket`): the descriptor
/// and what to do with it. The pointers (an address, a message header) belong to the
/// request that issues the call (SocketRequest.swift) and stay valid until its
/// completion.
enum SocketCall {
    /// Accepted sockets come back as the result, SOCK_NONBLOCK | SOCK_CLOEXEC.
    /// `multishot`: one request keeps accepting; each completion but the last has
    /// IORING_CQE_F_MORE.
    case accept(fd: Int32, multishot: Bool)
    case connect(fd: Int32, address: UnsafeRawPointer, length: UInt32)
    case receive(fd: Int32, message: OpaquePointer)
    /// A multishot receive into the provided buffers of `group` (System/ProvidedBuffers.swift);
    /// io_uring only.
    case receiveProvided(fd: Int32, group: UInt16, multishot: Bool)
    case send(fd: Int32, message: OpaquePointer)

    var fd: Int32 {
        switch self {
        case .accept(let fd, _), .connect(let fd, _, _), .receive(let fd, _), .receiveProvided(let fd, _, _),
             .send(let fd, _):
            return fd
        }
    }

    /// What readiness the call waits for when the socket is not ready.
    var events: UInt32 {
        switch self {
        case .accept, .receive, .receiveProvided: return Descriptors.readable
        case .connect, .send: return Descriptors.writable
        }
    }
}

extension Ring {
    /// Queues a socket request (on epoll: EpollQueue+Sockets.swift).
    func prepareSocket(_ call: SocketCall, userData: UInt64) throws(Errno) {
        if try injected(userData) { return }
        if let epoll = epollQueue { return epoll.queue(.socket(EpollQueue.SocketWork(call: call, userData: userData))) }
        let r: Int32
        switch call {
        case .accept(let fd, let multishot):
            r = rl_ring_prep_accept(ringHandle, fd, multishot ? 1 : 0, userData)
        case .connect(let fd, let address, let length):
            r = rl_ring_prep_connect(ringHandle, fd, address, length, userData)
        case .receive(let fd, let message):
            r = rl_ring_prep_recvmsg(ringHandle, fd, message, userData)
        case .receiveProvided(let fd, let group, let multishot):
            r = rl_ring_prep_recv_provided(ringHandle, fd, group, multishot ? 1 : 0, userData)
        case .send(let fd, let message):
            r = rl_ring_prep_sendmsg(ringHandle, fd, message, userData)
        }
        if r < 0 { throw Errno(negated: r) }
    }
}
