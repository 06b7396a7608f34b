#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore
@_spi(RingletNet) import Ringlet

// Reading: one continuous receive (a multishot receive into the runtime's provided
// buffers) runs while the pipeline wants bytes. Each chunk is copied into a ByteBuffer
// of the channel's allocator at once, so the runtime's receive buffer goes back to the
// kernel at once; chunks that arrive together merge into one buffer, delivered once
// those the manager queued with it are in. A chunk that arrives while nobody asked
// waits in `inbound` and stops the receive; the next `read()` delivers it and starts
// the receive again.
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
            append(data)
            if readPending {
                // After the chunks the manager queued with this one: one channelRead of
                // them all, one channelReadComplete, one flush for a pipeline that echoes.
                scheduleDelivery()
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

    /// Copies a chunk into the last buffer not yet delivered while it stays within
    /// `mergedBytes`, else into a new one: a message the kernel split across receive
    /// buffers reaches the pipeline as one read, as one read(2) would give it. A full
    /// receive buffer tells that more may follow: its buffer gets room for them.
    private func append(_ data: DispatchData) {
        let count = data.count
        if inbound.isEmpty || inbound[inbound.count - 1].readableBytes + count > Self.mergedBytes {
            inbound.append(settings.allocator.buffer(capacity: count < RingSocket.receiveBufferBytes ? count : Self.mergedBytes))
        }
        inbound[inbound.count - 1].writeWithUnsafeMutableBytes(minimumWritableBytes: count) { room in
            data.copyBytes(to: room, count: count)
            return count
        }
    }

    /// The most bytes one channelRead carries when chunks merge (NIO's own read size
    /// grows to 64 KiB too).
    static let mergedBytes = 65_536

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
