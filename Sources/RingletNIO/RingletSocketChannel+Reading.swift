#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore
@_spi(RingletNet) import Ringlet

// Reading: one continuous receive (a multishot receive into the runtime's provided
// buffers) runs while the pipeline wants bytes. Each chunk is copied into a ByteBuffer
// of the channel's allocator at once, so the runtime's receive buffer goes back to the
// kernel at once. A chunk that arrives while nobody asked waits in `inbound` and stops
// the receive; the next `read()` delivers it and starts the receive again.
extension RingletSocketChannel {
    func read0() {
        guard !closed, isActive, !inputClosed else { return }
        readPending = true
        if !inbound.isEmpty || isEnded {
            scheduleDelivery()  // not from inside read(): the pipeline is in the middle of an outbound call
        } else {
            startReceiving()
        }
    }

    private var isEnded: Bool {
        if case .none = inputEnd { return false }
        return true
    }

    func startReceiving() {
        guard receiver == nil, !receiverStopping, let socket, !closed, !inputClosed, !isEnded else { return }
        receiver = socket.receiveContinuously(queue: loop.queue) { [self] event in
            loop.run { received(event) }
        }
    }

    private func stopReceiving() {
        guard let receiver, !receiverStopping else { return }
        receiverStopping = true
        receiver.cancel()
    }

    private func received(_ event: StreamEvent) {
        switch event {
        case .received(let data):
            if closed || inputClosed { return }
            var buffer = settings.allocator.buffer(capacity: data.count)
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: data.count) { room in
                data.copyBytes(to: room, count: data.count)
                return data.count
            }
            inbound.append(buffer)
            if readPending {
                deliver()
            } else {
                stopReceiving()
            }
        case .ended(let error):
            receiver = nil
            receiverStopping = false
            if closed || inputClosed { return }
            if let error {
                if error.isCancellation {
                    if readPending { startReceiving() }  // stopped for a pause that is over
                    return
                }
                inputEnd = .failed(NIOErrors.io(error))
            } else {
                inputEnd = .endOfStream
            }
            if readPending { deliver() }
        }
    }

    private func scheduleDelivery() {
        if deliveryScheduled { return }
        deliveryScheduled = true
        loop.execute { [self] in
            deliveryScheduled = false
            if readPending { deliver() }
        }
    }

    /// Hands what arrived to the pipeline (one `read()`'s worth: every chunk waiting,
    /// then `channelReadComplete`), and the end of input once nothing is left before it.
    private func deliver() {
        if !inbound.isEmpty {
            readPending = false
            let chunks = inbound
            inbound = []
            for chunk in chunks {
                if closed { return }
                pipeline.syncOperations.fireChannelRead(NIOAny(chunk))
            }
            if closed { return }
            pipeline.syncOperations.fireChannelReadComplete()
            if settings.autoRead, !closed { pipeline.syncOperations.read() }
            if closed || !readPending { return }
            // Another read is wanted: the end, if it is here, or more bytes.
        }
        switch inputEnd {
        case .none:
            startReceiving()
        case .endOfStream:
            inputEnd = .none
            inputClosed = true
            readPending = false
            if settings.allowRemoteHalfClosure {
                pipeline.syncOperations.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            } else {
                close0(error: ChannelError.eof, mode: .all, promise: nil)
            }
        case .failed(let error):
            inputEnd = .none
            readPending = false
            pipeline.syncOperations.fireErrorCaught(error)
            close0(error: error, mode: .all, promise: nil)
        }
    }
}
#endif
