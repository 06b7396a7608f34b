// Reads and writes on epoll (manager thread only). The manager never blocks in one:
//
//   attempt --RWF_NOWAIT--> done (bytes or the error)
//           --EAGAIN, pipe or socket--> waits for readiness (a `Waiter`), then attempt again
//           --EAGAIN, regular file (not in the page cache)--> an I/O helper thread
//           --EOPNOTSUPP, regular file--> an I/O helper thread
//           --EOPNOTSUPP, other (a terminal)--> waits for readiness, then a helper thread
//
// which is what io_uring does inside the kernel: a read of cached bytes or of a ready
// pipe is made inline, anything else waits for readiness or goes to a kernel worker
// (io-wq). A helper's result comes back through its eventfd (IOHelperThreads.swift).

extension EpollQueue {
    /// Makes `transfer` now if it can be made without blocking.
    func attempt(_ transfer: Transfer) {
        if transfer.needsHelper {
            helperJobs.append(job(transfer))
            return
        }
        let moved: Int
        do throws(Errno) {
            moved = try EpollCalls.transferNow(write: transfer.write, fd: transfer.fd, buffer: transfer.buffer,
                                                length: transfer.length, offset: transfer.offset)
        } catch {
            notNow(transfer, error)
            return
        }
        post(transfer.userData, Int32(truncatingIfNeeded: moved))
    }

    private func notNow(_ transfer: Transfer, _ error: Errno) {
        let events = transfer.write ? Descriptors.writable : Descriptors.readable
        switch error {
        case .tryAgain:
            if transfer.offset != nil {
                helperJobs.append(job(transfer))  // a regular file waiting for the disk
            } else {
                addWaiter(fd: transfer.fd, Waiter(userData: transfer.userData, events: events,
                                                  kind: .transfer(transfer)), justTried: true)
            }
        case .notSupported, .invalidArgument, .notImplemented:
            // No RWF_NOWAIT for this file (or none in this kernel: EINVAL, ENOSYS).
            if transfer.offset != nil {
                helperJobs.append(job(transfer))
            } else {
                var later = transfer
                later.needsHelper = true
                addWaiter(fd: transfer.fd, Waiter(userData: transfer.userData, events: events, kind: .transfer(later)))
            }
        case .illegalSeek where transfer.offset == 0:
            // io_uring ignores an offset of 0 on a file without offsets (a pipe).
            var atPosition = transfer
            atPosition.offset = nil
            attempt(atPosition)
        default:
            post(transfer.userData, -error.rawValue)  // EPIPE, EBADF, EFAULT...: the transfer's own result
        }
    }

    func job(_ transfer: Transfer) -> IOHelperThreads.Job {
        IOHelperThreads.Job(userData: transfer.userData, write: transfer.write, fd: transfer.fd,
                            buffer: transfer.buffer, length: transfer.length, offset: transfer.offset,
                            ioprio: transfer.ioprio)
    }

    /// IORING_OP_ASYNC_CANCEL: a poll or a transfer waiting for readiness, a job not
    /// yet taken by a helper, or a timeout completes with -ECANCELED and the cancel
    /// with 0; a job a helper is making cannot be stopped (-EALREADY: its result
    /// comes); anything else is not found (-ENOENT).
    func cancel(_ target: UInt64, _ userData: UInt64) {
        if removeWaiter(target, pollsOnly: false) || removeTimeout(target) {
            post(userData, 0)
            return
        }
        if let index = helperJobs.firstIndex(where: { $0.userData == target }) {
            helperJobs.remove(at: index)
            post(target, -Errno.cancelled.rawValue)
            post(userData, 0)
            return
        }
        switch helpers.cancel(target) {
        case .cancelled:
            post(target, -Errno.cancelled.rawValue)
            post(userData, 0)
        case .running:
            post(userData, -Errno.alreadyInProgress.rawValue)
        case .notFound:
            post(userData, -Errno.noSuchFile.rawValue)
        }
    }
}
