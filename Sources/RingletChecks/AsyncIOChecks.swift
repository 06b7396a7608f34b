#if canImport(_Concurrency)
import _Concurrency
import CRinglet
import CRingletTestSupport
import Ringlet

// Async I/O on the ring, in the tasks of AsyncChecks.swift: awaited DispatchIO reads and
// writes, a pipe's chunks, a cancelled read, and a source's events. The same code runs
// in Embedded Swift, which has no `any Error`: there the async forms throw
// `DispatchIO.OperationError` only, a cancelled task's with `isTaskCancellation`, and
// the chunks are read through their iterator (no `for try await`). Every wait is bounded.

private let openReadWrite: Int32 = 0o2, openCreate: Int32 = 0o100, openTruncate: Int32 = 0o1000

/// Whether `error` is what an awaited read of a cancelled task throws.
#if hasFeature(Embedded)
private func isTaskCancellation(_ error: DispatchIO.OperationError) -> Bool { error.isTaskCancellation }
#else
private func isTaskCancellation(_ error: any Error) -> Bool { error is CancellationError }
#endif

/// `count` bytes of a pattern that starts at `start`.
private func patternData(_ count: Int, from start: Int = 0) -> DispatchData {
    let bytes = (0..<count).map { UInt8(truncatingIfNeeded: ($0 + start) &* 13 &+ 5) }
    return bytes.withUnsafeBytes { DispatchData(bytes: $0) }
}

/// Adds the async I/O checks to `harness`.
func runAsyncIOChecks(_ harness: CheckHarness) {
    harness.run("an awaited write, then an awaited read of the file, gives back its bytes") {
        var path = "/tmp/ringlet-checks.async-io"
        var fd = rl_open(path, openReadWrite | openCreate | openTruncate, 0o600)
        if fd < 0 {
            path = "/ringlet-checks.async-io"  // /tmp may be missing in an initramfs
            fd = rl_open(path, openReadWrite | openCreate | openTruncate, 0o600)
        }
        if fd < 0 { return "could not create a file: errno \(-fd)" }
        _ = rl_unlink(path)
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: DispatchQueue(label: "checks.async.file")) { _ in
            rl_close(fd)
        }
        let failure = awaitCheck {
            let written = patternData(600_001)
            do throws(DispatchIO.AsyncFailure) {
                try await channel.write(offset: 0, data: written)
                let back = try await channel.read(offset: 0, length: Int.max)
                if back.count != written.count { return "read \(back.count) of \(written.count) bytes" }
                return back.elementsEqual(written) ? nil : "the bytes read back differ"
            } catch {
                return "\(error)"
            }
        }
        channel.close()
        return failure
    }

    harness.run("a pipe's chunks come in order and end when the writer closes it") {
        var fds: [Int32] = [-1, -1]
        if fds.withUnsafeMutableBufferPointer({ rl_pipe($0.baseAddress, 0) }) != 0 { return "pipe2 failed" }
        let readEnd = fds[0], writeEnd = fds[1]
        let total = 200_000
        DispatchQueue.global().async {
            var sent = 0
            while sent < total {
                let piece = patternData(min(7_000, total - sent), from: sent)
                var bytes = [UInt8](piece)
                let n = bytes.withUnsafeMutableBytes { rl_fd_write(writeEnd, $0.baseAddress, UInt64($0.count)) }
                if n <= 0 { break }
                sent += Int(n)  // a blocking pipe writes all of it
            }
            rl_close(writeEnd)
        }
        let channel = DispatchIO(type: .stream, fileDescriptor: readEnd, queue: DispatchQueue(label: "checks.async.pipe")) { _ in
            rl_close(readEnd)
        }
        // A step reads what the pipe holds until it finds it empty, so a writer that
        // keeps it full (a loaded machine) makes one long step: the high water bounds
        // each step, and then 200,000 bytes are at least 4 chunks.
        let highWater = 50_000
        channel.setLimit(highWater: highWater)
        let failure = awaitCheck {
            var chunks = channel.chunks().makeAsyncIterator()
            var received = DispatchData.empty
            var pieces = 0
            do throws(DispatchIO.AsyncFailure) {
                while let chunk = try await chunks.next() {
                    if chunk.count > highWater { return "a chunk of \(chunk.count) bytes passed the high water" }
                    received.append(chunk)
                    pieces += 1
                }
            } catch {
                return "\(error) after \(received.count) bytes"
            }
            if received.count != total { return "read \(received.count) of \(total) bytes" }
            if !received.elementsEqual(patternData(total)) { return "bytes out of place" }
            return pieces >= 4 ? nil : "\(total) bytes came as \(pieces) chunk(s) of at most \(highWater)"
        }
        channel.close()
        return failure
    }

    harness.run("cancelling the task of a read waiting on an empty pipe ends the read, which takes nothing") {
        var fds: [Int32] = [-1, -1]
        if fds.withUnsafeMutableBufferPointer({ rl_pipe($0.baseAddress, 0) }) != 0 { return "pipe2 failed" }
        let readEnd = fds[0], writeEnd = fds[1]
        defer { rl_close(writeEnd) }
        let channel = DispatchIO(type: .stream, fileDescriptor: readEnd, queue: DispatchQueue(label: "checks.async.cancel")) { _ in
            rl_close(readEnd)
        }
        let failure = awaitCheck {
            // Cancelled before the read starts, then after a few turns of the
            // executor (the read on its way to the ring or waiting there).
            for turns in [0, 3] {
                let reader = Task { () -> String? in
                    do throws(DispatchIO.AsyncFailure) {
                        let data = try await channel.read(offset: 0, length: 10)
                        return "the read returned \(data.count) bytes"
                    } catch {
                        return isTaskCancellation(error) ? nil : "the read threw \(error)"
                    }
                }
                for _ in 0..<turns { await Task.yield() }
                reader.cancel()
                if let failure = await reader.value { return "cancelled after \(turns) turns: \(failure)" }
            }
            // Nothing of the cancelled reads is left: a byte written now is the next read's.
            var byte: UInt8 = 42
            _ = rl_fd_write(writeEnd, &byte, 1)
            do throws(DispatchIO.AsyncFailure) {
                let next = try await channel.read(offset: 0, length: 1)
                return next.count == 1 && next[0] == 42 ? nil : "the byte went elsewhere"
            } catch {
                return "the read after the cancelled ones threw \(error)"
            }
        }
        channel.close()
        return failure
    }

    harness.run("a source's events merge while the task is away and end when it is cancelled") {
        let queue = DispatchQueue(label: "checks.async.events")
        let source = DispatchSource.makeUserDataAddSource(queue: queue)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .milliseconds(2))
        // Bounded: the sources end after `timeout` whatever happens.
        nonisolated(unsafe) let watched = (source, timer)
        DispatchQueue.global().asyncAfter(deadline: timeout) {
            watched.0.cancel()
            watched.1.cancel()
        }
        let added = source.events.makeAsyncIterator()  // takes the events over, activates
        for value: UInt in [1, 2, 3] { source.add(data: value) }
        queue.sync {}  // the adds' deliveries have run: one element holds them
        return awaitCheck {
            var iterator = added
            let sum = await iterator.next()
            if sum != 6 { return "the adds came as \(sum.map { "\($0)" } ?? "nil"), not one element of 6" }
            watched.0.cancel()
            if await iterator.next() != nil { return "the events went on after cancel()" }
            var fires = 0
            for await _ in watched.1.events {
                fires += 1
                if fires == 3 { watched.1.cancel() }
            }
            return fires == 3 ? nil : "the timer's events ended after \(fires) of 3"
        }
    }
}
#endif
