import CRinglet
import Glibc
import Testing
@testable import Ringlet

/// The bounds DispatchIO keeps: buffer budget (backpressure), request records,
/// queue depth. Each runs in a child process with its own configuration.
@Suite struct IOBoundsTests {
    @Test func aSlowHandlerStopsReadsInsteadOfGrowingMemory() async {
        await #expect(processExitsWith: .success) { IOBoundsScenarios.backpressure() }
    }

    @Test func requestsInFlightNeverExceedTheRecords() async {
        await #expect(processExitsWith: .success) { IOBoundsScenarios.recordBound() }
    }

    @Test func randomReadsKeepSeveralRequestsInFlight() async {
        await #expect(processExitsWith: .success) { IOBoundsScenarios.queueDepth() }
    }
}

enum IOBoundsScenarios {
    static var engine: IOEngine { RuntimeParts.shared.manager.takeUnretainedValue().io }

    static func backpressure() {
        startRuntime(RuntimeConfiguration(cores: 2, ioQueueDepth: 8, ioChunkBytes: 64 * 1024, ioRequests: 64,
                                          ioBufferBytes: 256 * 1024))
        let size = 2 << 20  // eight times the budget
        let file = TestFile(count: size)
        defer { file.remove() }
        let fd = file.open()
        let queue = DispatchQueue(label: "test.io.backpressure")
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
        let gate = Gate()
        let received = AtomicCounter()
        let finished = DispatchSemaphore(value: 0)
        let mismatches = AtomicCounter()
        channel.read(offset: 0, length: Int.max, queue: queue) { done, data, _ in
            if let data {
                let start = received.value
                // Every 97th byte: enough to see order and content, cheap under TSan.
                for i in stride(from: 0, to: data.count, by: 97) where data[i] != patternByte(start + i) {
                    _ = mismatches.increment()
                }
                _ = received.increment(by: data.count)
            }
            if !done { _ = gate.pass(within: 30) }  // the slow consumer
            if done { finished.signal() }
        }
        // Held by the first handler: reads go on only until the budget is spent, and
        // the manager then waits for a handler to give bytes back. (Bytes held with
        // nothing in flight is no proof: the manager reserves a read's bytes before it
        // counts the read in flight.)
        #expect(eventually { engine.pool.waitsForBudget && engine.counters.inFlight == 0 })
        // The manager has gone round twice since: it would have issued more reads if
        // the budget allowed (the queue is held by the slow handler, so no barrier).
        onManager {}
        onManager {}
        #expect(engine.counters.inFlight == 0)
        #expect(engine.pool.heldBytes <= 256 * 1024)
        gate.open()
        #expect(waited(finished))
        #expect(received.value == size)
        #expect(mismatches.value == 0)
        #expect(engine.pool.peakHeldBytes <= 256 * 1024)
        #expect(eventually { engine.pool.heldBytes == 0 })
        channel.close()
    }

    static func recordBound() {
        startRuntime(RuntimeConfiguration(cores: 2, ioQueueDepth: 64, ioChunkBytes: 64 * 1024, ioRequests: 8))
        let file = TestFile(count: 1 << 20)
        defer { file.remove() }
        let fd = file.open()
        let queue = DispatchQueue(label: "test.io.records", attributes: .concurrent)
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
        let group = DispatchGroup()
        let wrong = AtomicCounter()
        for index in 0..<200 {
            let offset = (index * 4096 * 7) % ((1 << 20) - 4096)
            group.enter()
            // Data may come before `done` (as it arrives), so each read gathers its pieces.
            let transcript = IOTranscript()
            channel.read(offset: offset, length: 4096, queue: queue) { done, data, error in
                transcript.handler(done, data, error)
                if done {
                    if error != 0 || transcript.data != patternBytes(4096, from: offset) { _ = wrong.increment() }
                    group.leave()
                }
            }
        }
        #expect(waited(group))
        #expect(wrong.value == 0)
        #expect(engine.counters.peak <= 8)
        channel.close()
    }

    static func queueDepth() {
        startRuntime(RuntimeConfiguration(cores: 2, ioQueueDepth: 16, ioChunkBytes: 64 * 1024))
        let file = TestFile(count: 4 << 20)
        defer { file.remove() }
        let fd = file.open()
        let queue = DispatchQueue(label: "test.io.depth")
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
        let finished = DispatchSemaphore(value: 0)
        channel.read(offset: 0, length: Int.max, queue: queue) { done, _, _ in
            if done { finished.signal() }
        }
        #expect(waited(finished))
        // One sequential read of 64 chunks went out several requests at a time, at most 16.
        #expect(engine.counters.peak > 1)
        #expect(engine.counters.peak <= 16)
        channel.close()
    }
}

/// Faults on DispatchIO's requests (debug builds inject them on the manager thread;
/// in a child process, so that no other test's request takes them).
@Suite struct IOFaultTests {
    @Test func transientErrorsAreRetriedAndNoByteIsLost() async {
        await #expect(processExitsWith: .success) { IOBoundsScenarios.transientFaults() }
    }

    @Test func aPersistentErrorEndsTheReadWithItsErrno() async {
        await #expect(processExitsWith: .success) { IOBoundsScenarios.persistentFault() }
    }
}

extension IOBoundsScenarios {
    static var managerThread: Int32 { RuntimeParts.shared.manager.takeUnretainedValue().threadID }

    static func readAll(_ file: TestFile) -> IOTranscript {
        let fd = file.open()
        let queue = DispatchQueue(label: "test.io.fault")
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in Glibc.close(fd) }
        let transcript = IOTranscript()
        channel.read(offset: 0, length: Int.max, queue: queue, ioHandler: transcript.handler)
        #expect(transcript.waitDone())
        channel.close()
        return transcript
    }

    static func transientFaults() {
        startRuntime(RuntimeConfiguration(cores: 2, ioChunkBytes: 64 * 1024))
        let file = TestFile(count: 1 << 20)
        defer { file.remove() }
        for error in [Errno.noMemory, .interrupted, .cancelled, .tryAgain] {
            SyscallFaults.inject(.requestCompletion, error, count: 3, thread: managerThread)
            let transcript = readAll(file)
            SyscallFaults.reset(thread: managerThread)
            #expect(transcript.finalError == 0, "after \(error.name)")
            #expect(transcript.data == patternBytes(1 << 20), "after \(error.name)")
        }
    }

    static func persistentFault() {
        startRuntime(RuntimeConfiguration(cores: 2, ioQueueDepth: 1, ioChunkBytes: 64 * 1024))
        let file = TestFile(count: 1 << 20)
        defer { file.remove() }
        SyscallFaults.inject(.requestCompletion, .noMemory, count: IOEngine.retryLimit + 1, thread: managerThread)
        let transcript = readAll(file)
        SyscallFaults.reset(thread: managerThread)
        #expect(transcript.finalError == ENOMEM)
        #expect(transcript.doneCalls == 1)
        // The next read works again.
        #expect(readAll(file).data == patternBytes(1 << 20))
    }
}
