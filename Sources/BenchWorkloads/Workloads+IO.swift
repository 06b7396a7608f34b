// The I/O rows of `ringlet bench`, compiled into both sides (see Workloads.swift).
#if BENCH_RINGLET
import Ringlet
#elseif BENCH_DISPATCH
import Dispatch
#else
#error("Sources/BenchWorkloads is compiled only through BenchWorkloadsDispatch and BenchWorkloadsRinglet")
#endif
import BenchSupport
import Glibc
import Synchronization

extension Workloads {
    /// Sequential read of the file, random 4 KiB reads with `ioInFlight` in flight,
    /// and a pipe stream; the best of `repetitions` each, and the peak thread count.
    static func io(_ scale: BenchScale) -> [(String, Double)] {
        let path = BenchIOFiles.prepare(bytes: scale.ioFileBytes)
        let offsets = BenchIOFiles.randomOffsets(scale.ioRandomReads, bytes: scale.ioFileBytes)
        let queue = DispatchQueue(label: "bench.io")
        // Warm up the runtime's threads, then count from here.
        _ = sequential(path, queue, scale)
        // The sampler counts itself; the pipe row also has the writer thread.
        let before = benchThreadCount()
        let sampler = BenchThreadSampler()
        sampler.start()
        let seq = benchRepeat(scale.ioRepetitions) { sequential(path, queue, scale) }
        let random = benchRepeat(scale.ioRepetitions) { randomReads(path, offsets, queue, scale) }
        let (readPeak, _) = sampler.stop()
        let pipeSampler = BenchThreadSampler()
        pipeSampler.start()
        let pipe = benchRepeat(scale.ioRepetitions) { pipeStream(queue, scale) }
        let (pipePeak, _) = pipeSampler.stop()
        let growth = Swift.max(readPeak - before - 1, pipePeak - before - 2, 0)
        return [("seq_ns", Double(seq.min() ?? 0)), ("random_ns", Double(random.min() ?? 0)),
                ("pipe_ns", Double(pipe.min() ?? 0)), ("io_threads_before", Double(before)),
                ("io_threads_peak", Double(Swift.max(readPeak - 1, pipePeak - 2))),
                ("io_thread_growth", Double(growth))]
    }

    private static func sequential(_ path: String, _ queue: DispatchQueue, _ scale: BenchScale) -> UInt64 {
        let fd = open(path, O_RDONLY)
        let done = DispatchSemaphore(value: 0)
        let bytes = Atomic<Int>(0)
        let start = benchNow()
        let channel = DispatchIO(type: .stream, fileDescriptor: fd, queue: queue) { _ in close(fd) }
        channel.read(offset: 0, length: Int.max, queue: queue) { finished, data, _ in
            bytes.wrappingAdd(data?.count ?? 0, ordering: .relaxed)
            if finished { done.signal() }
        }
        done.wait()
        let elapsed = benchNow() - start
        channel.close()
        precondition(bytes.load(ordering: .relaxed) == scale.ioFileBytes, "bench: short sequential read")
        return elapsed
    }

    private static func randomReads(_ path: String, _ offsets: [Int], _ queue: DispatchQueue,
                                    _ scale: BenchScale) -> UInt64 {
        let fd = open(path, O_RDONLY)
        let done = DispatchSemaphore(value: 0)
        let channel = DispatchIO(type: .random, fileDescriptor: fd, queue: queue) { _ in close(fd) }
        let next = Atomic<Int>(0)
        let completed = Atomic<Int>(0)
        let total = offsets.count
        func issue() {
            let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
            if index >= total { return }
            channel.read(offset: offsets[index], length: 4096, queue: queue) { finished, _, _ in
                if !finished { return }
                if completed.wrappingAdd(1, ordering: .relaxed).newValue == total { done.signal() } else { issue() }
            }
        }
        let start = benchNow()
        for _ in 0..<scale.ioInFlight { issue() }
        done.wait()
        let elapsed = benchNow() - start
        channel.close()
        return elapsed
    }

    private static func pipeStream(_ queue: DispatchQueue, _ scale: BenchScale) -> UInt64 {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0, "bench: pipe failed")
        let done = DispatchSemaphore(value: 0)
        let bytes = Atomic<Int>(0)
        let start = benchNow()
        let channel = DispatchIO(type: .stream, fileDescriptor: fds[0], queue: queue) { _ in close(fds[0]) }
        channel.read(offset: 0, length: Int.max, queue: queue) { finished, data, _ in
            bytes.wrappingAdd(data?.count ?? 0, ordering: .relaxed)
            if finished { done.signal() }
        }
        let writer = BenchPipeWriter(fd: fds[1], total: scale.ioPipeBytes)
        writer.start()
        done.wait()
        let elapsed = benchNow() - start
        writer.join()
        channel.close()
        precondition(bytes.load(ordering: .relaxed) == scale.ioPipeBytes, "bench: short pipe stream")
        return elapsed
    }
}
