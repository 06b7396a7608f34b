#if NIO  // the package's NIO trait (Package.swift): without it this module is empty
import NIOCore
@_spi(RingletNet) import Ringlet

// Closing: the output side (a FIN after the sends already flushed), the input side, or
// all of it — the socket's close cancels its requests and closes the descriptor once the
// last one is back; only then do the close's promise and `closeFuture` complete, so a
// closed channel never holds a descriptor.
extension RingletSocketChannel {
    func close0(error: Error, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if closed { return promise?.fail(ChannelError.alreadyClosed) ?? () }
        switch mode {
        case .output: closeOutput(promise: promise)
        case .input: closeInput(promise: promise)
        case .all: closeAll(error: error, promise: promise)
        }
    }

    private func closeOutput(promise: EventLoopPromise<Void>?) {
        if outputClosed { return promise?.fail(ChannelError.outputClosed) ?? () }
        guard let socket, isActive else { return promise?.fail(ChannelError.inappropriateOperationForState) ?? () }
        outputClosed = true
        failUnflushed(ChannelError.outputClosed)
        socket.shutdown(.write, queue: loop.queue) { [self] result in
            loop.run {
                switch result {
                case .success:
                    promise?.succeed(())
                    if !closed { pipeline.syncOperations.fireUserInboundEventTriggered(ChannelEvent.outputClosed) }
                case .failure(let error):
                    promise?.fail(NIOErrors.channel(error))
                }
            }
        }
    }

    private func closeInput(promise: EventLoopPromise<Void>?) {
        if inputClosed { return promise?.fail(ChannelError.inputClosed) ?? () }
        guard let socket, isActive else { return promise?.fail(ChannelError.inappropriateOperationForState) ?? () }
        inputClosed = true
        inbound = []
        readPending = false
        receiver?.cancel()
        socket.shutdown(.read, queue: loop.queue) { [self] result in
            loop.run {
                switch result {
                case .success:
                    promise?.succeed(())
                    if !closed { pipeline.syncOperations.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
                case .failure(let error):
                    promise?.fail(NIOErrors.channel(error))
                }
            }
        }
    }

    private func closeAll(error: Error, promise: EventLoopPromise<Void>?) {
        closed = true
        let wasActive = activeFlag.exchange(false, ordering: .acquiringAndReleasing)
        failUnflushed(error)
        inbound = []
        readPending = false
        if let pending = connectPromise {
            connectPromise = nil
            connectTimeout?.cancel()
            pending.fail(error)
        }
        if let socket {
            socket.close(queue: loop.queue) { [self] in loop.run { finishClose(promise) } }
        } else {
            loop.execute { [self] in finishClose(promise) }
        }
        if wasActive { pipeline.syncOperations.fireChannelInactive() }
    }

    /// The descriptor is closed: unregistered, the handlers removed, the promises kept.
    private func finishClose(_ promise: EventLoopPromise<Void>?) {
        if registered {
            registered = false
            pipeline.syncOperations.fireChannelUnregistered()
        }
        loop.closed(self)
        removeHandlers(pipeline: pipeline)
        promise?.succeed(())
        closePromise.succeed(())
    }
}
#endif
