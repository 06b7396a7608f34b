#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore
@_spi(RingletNet) import Ringlet

// Writing: `write` keeps buffers, `flush` hands every kept buffer to the socket as one
// vectored send (the buffers' own bytes, held until the kernel took them: no copy): at
// once from the loop's thread when no send is under way (`RingSocket.sendNow`), and what
// the kernel did not take on the ring, which waits for room. The socket's sends go in
// order, so a flush does not wait for the one before it. The water marks count every
// byte from `write` until the kernel took it.
extension RingletSocketChannel {
    func write0(_ data: NIOAny, promise: EventLoopPromise<Void>?) {
        if closed { return promise?.fail(ChannelError.ioOnClosedChannel) ?? () }
        if outputClosed { return promise?.fail(ChannelError.outputClosed) ?? () }
        let buffer: ByteBuffer
        if let bytes = tryUnwrapData(data, as: ByteBuffer.self) {
            buffer = bytes
        } else if case .byteBuffer(let bytes)? = tryUnwrapData(data, as: IOData.self) {
            buffer = bytes
        } else {
            // A FileRegion (sendfile) or a type the channel does not know.
            return promise?.fail(ChannelError.operationUnsupported) ?? ()
        }
        unflushed.append((buffer, promise))
        pendingBytes += buffer.readableBytes
        updateWritability()
    }

    func flush0() {
        guard !unflushed.isEmpty, !closed, !outputClosed, let socket, isActive else { return }
        let batch = unflushed
        unflushed = []
        var data = DispatchData.empty
        var bytes = 0
        for item in batch where item.buffer.readableBytes > 0 {
            bytes += item.buffer.readableBytes
            item.buffer.withUnsafeReadableBytesWithStorageManagement { pointer, storage in
                let held = storage.retain()
                data.append(DispatchData(bytesNoCopy: pointer, releasedInline: { held.release() }))
            }
        }
        let promises = batch.compactMap(\.promise)
        if bytes == 0 {
            promises.forEach { $0.succeed(()) }
            return
        }
        sendsInFlight += 1
        // What the kernel takes at once goes from this thread (as NIO's own loops write);
        // the rest, in order, on the ring, which waits for room.
        var taken = 0
        if sendsInFlight == 1 {
            switch socket.sendNow(data) {
            case .success(let count): taken = count
            case .failure(let error): return sent(bytes: bytes, promises: promises, result: .failure(error))
            }
        }
        if taken == bytes { return sent(bytes: bytes, promises: promises, result: .success(())) }
        let rest = taken == 0 ? data : data.subdata(in: taken..<bytes)
        socket.send(rest, queue: loop.queue) { [self] result in
            loop.run { sent(bytes: bytes, promises: promises, result: result.map { _ in () }) }
        }
    }

    private func sent(bytes: Int, promises: [EventLoopPromise<Void>], result: Result<Void, SocketError>) {
        sendsInFlight -= 1
        pendingBytes -= bytes
        switch result {
        case .success:
            promises.forEach { $0.succeed(()) }
            if !closed { updateWritability() }
        case .failure(let error):
            let reported = NIOErrors.channel(error)
            promises.forEach { $0.fail(reported) }
            if closed || error.isCancellation { return }
            // The peer reset or the connection broke: NIO's channels report it and close.
            pipeline.syncOperations.fireErrorCaught(reported)
            close0(error: reported, mode: .all, promise: nil)
        }
    }

    /// Crosses the water marks: above `high` the channel is not writable, below `low` it
    /// is again; each change reaches the pipeline.
    func updateWritability() {
        let writable = isWritable
        if writable, pendingBytes > settings.waterMark.high {
            writableFlag.store(false, ordering: .releasing)
            pipeline.syncOperations.fireChannelWritabilityChanged()
        } else if !writable, pendingBytes < settings.waterMark.low {
            writableFlag.store(true, ordering: .releasing)
            pipeline.syncOperations.fireChannelWritabilityChanged()
        }
    }

    /// Fails every write not yet flushed.
    func failUnflushed(_ error: any Error) {
        let failed = unflushed
        unflushed = []
        for item in failed {
            pendingBytes -= item.buffer.readableBytes
            item.promise?.fail(error)
        }
    }
}
#endif
