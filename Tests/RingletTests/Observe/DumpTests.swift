import CRinglet
import Glibc
import Testing
@testable import Ringlet

/// The live dump (`Runtime.dump()`) names what it should: a queue's label with its
/// pending count, a running item's queue and QoS, an armed timer, an active source,
/// I/O in flight and the pools; the dump signal is opt-in and does not stop the process.
@Suite(.enabled(if: RingAvailability.works, "io_uring is refused here"))
struct DumpTests {
    /// The line of `text` that contains `marker` ("" when none).
    private func line(of text: String, containing marker: String) -> String {
        text.split(separator: "\n").first { $0.contains(marker) }.map(String.init) ?? ""
    }

    @Test func aQueueWithPendingWorkIsListedWithItsCountQoSAndState() {
        let queue = DispatchQueue(label: "test.dump.pending", qos: .utility)
        queue.suspend()
        for _ in 0..<3 { queue.async {} }
        let text = Runtime.dump()
        queue.resume()
        settle(queue)
        let entry = line(of: text, containing: "queue 'test.dump.pending'")
        #expect(entry.contains("queue 'test.dump.pending': 3 item(s) (serial, QoS utility"), "\(text)")
        #expect(entry.contains("suspended (1 unbalanced suspend())"), "\(text)")
        #expect(entry.contains("oldest item enqueued from"), "no breadcrumb for the oldest item: \(text)")
        // Once run, the queue holds nothing and is not listed.
        #expect(!Runtime.dump().contains("queue 'test.dump.pending'"))
    }

    @Test func aRunningItemIsShownOnItsThreadWithItsQueueAndQoS() {
        let queue = DispatchQueue(label: "test.dump.running", qos: .userInitiated)
        let started = Gate(), release = Gate()
        queue.async { started.open(); release.pass() }
        #expect(started.pass())
        let text = Runtime.dump()
        release.open()
        settle(queue)
        let entry = line(of: text, containing: "runs an item of queue 'test.dump.running'")
        // A worker's or, when other suites in this process block workers, a reserve's.
        #expect(entry.contains("ringlet-w") || entry.contains("ringlet-r"), "\(text)")
        #expect(entry.contains("at userInitiated"), "\(text)")
        #expect(entry.contains("the item was enqueued from"), "no breadcrumb on the thread: \(text)")
        #expect(text.contains("queue 'test.dump.running': 0 item(s)") && text.contains("running (1 slot(s) held)"),
                "\(text)")
    }

    /// In a child process: the dump lists the 16 soonest timers, and a suite running in
    /// parallel here (2,000 asyncAfter items) armed nearly a thousand sooner ones, so
    /// the 600 s timer was not among them (looped with the timer suites under load).
    @Test func anArmedTimerIsListedWithItsLeewayAndWindowGroup() async {
        await #expect(processExitsWith: .success) {
            startRuntime(twoCoreConfiguration())
            let queue = DispatchQueue(label: "test.dump.timer")
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + 600, repeating: .seconds(600), leeway: .milliseconds(250))
            timer.setEventHandler {}
            timer.activate()
            settle(queue)
            // And one the manager keeps: an asyncAfter item.
            queue.asyncAfter(deadline: .now() + 600, qos: .default, flags: []) {}
            settle(queue)
            let text = Runtime.dump()
            timer.cancel()
            // The timer source is its band's (Architecture, "Timers kept by their band").
            let entry = text.split(separator: "\n").first { $0.contains("timer source (queue 'test.dump.timer')") }
                .map(String.init) ?? ""
            #expect(entry.contains("leeway 250.0 ms, every 600000.0 ms: "), "\(text)")
            #expect(entry.hasPrefix("    in "), "\(text)")
            #expect(text.contains("timers kept by the high band's workers (1):"), "\(text)")
            #expect(text.contains("window group 1: an asyncAfter item"), "\(text)")
            #expect(text.contains("window group(s): the manager wakes once per group"), "\(text)")
            #expect(text.split(separator: "\n").filter { $0.contains("timer source (queue 'test.dump.timer')") }.count == 2,
                    "not among the active sources: \(text)")
        }
    }

    @Test func anActiveSourceIsListedWithItsFdAndQueue() {
        let pipe = TestPipe()
        defer { close(pipe.readEnd); close(pipe.writeEnd) }
        let queue = DispatchQueue(label: "test.dump.source")
        let source = DispatchSource.makeReadSource(fileDescriptor: pipe.readEnd, queue: queue)
        let cancelled = DispatchSemaphore(value: 0)
        source.setEventHandler {}
        source.setCancelHandler { cancelled.signal() }
        source.activate()
        settle(queue)
        let text = Runtime.dump()
        source.cancel()
        #expect(waited(cancelled))
        #expect(line(of: text, containing: "active sources").contains("of 'sources'"), "\(text)")
        #expect(text.contains("    read source on fd \(pipe.readEnd) (queue 'test.dump.source')"), "\(text)")
    }

    @Test func aReadInFlightIsListedUnderItsChannel() {
        let pipe = blockingPipe()
        let queue = DispatchQueue(label: "test.dump.io")
        let closed = DispatchSemaphore(value: 0)
        let channel = DispatchIO(type: .stream, fileDescriptor: pipe.read, queue: queue) { _ in closed.signal() }
        let done = DispatchSemaphore(value: 0)
        channel.read(offset: 0, length: 1, queue: queue) { finished, _, _ in if finished { done.signal() } }
        var text = ""
        #expect(eventually {
            text = Runtime.dump()
            return text.contains("channel on fd \(pipe.read): 1 request(s)")
        }, "\(text)")
        writeAll(pipe.write, [1])
        #expect(waited(done))
        channel.close()
        #expect(waited(closed))
        close(pipe.read)
        close(pipe.write)
    }

    @Test func thePoolsAndThreadsAreListed() {
        let text = Runtime.dump()
        #expect(text.hasPrefix("Ringlet dump of process \(getpid()):"), "\(text)")
        #expect(text.contains("pool threads (\(Runtime.current.configuration.poolThreads)):"), "\(text)")
        #expect(text.contains("work nodes: ") && text.contains("('workNodes')"), "\(text)")
        #expect(text.contains("timers armed ("), "\(text)")
    }

    // MARK: The dump signal

    /// Opted in, the signal writes the dump to stderr and to the well-known file, and
    /// the process goes on.
    @Test func theDumpSignalWritesTheDumpAndTheProcessGoesOn() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            var configuration = twoCoreConfiguration()
            configuration.dumpSignal = SIGUSR1
            startRuntime(configuration)
            let queue = DispatchQueue(label: "test.dump.signal")
            queue.suspend()
            queue.async {}
            let path = "/tmp/ringlet-dump-\(getpid()).txt"
            unlink(path)
            kill(getpid(), SIGUSR1)
            #expect(eventually { access(path, F_OK) == 0 }, "no dump file")
            let text = (try? MachineFiles.read(path: path)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            #expect(text.contains("queue 'test.dump.signal': 1 item(s)"), "\(text)")
            #expect(text.contains("the dump signal 10 (configuration key 'dumpSignal')"), "\(text)")
            unlink(path)
            // Twice: the signal stays watched.
            kill(getpid(), SIGUSR1)
            #expect(eventually { access(path, F_OK) == 0 }, "no second dump")
            unlink(path)
            queue.resume()
            settle(queue)
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("Ringlet dump of process"), "\(text)")
    }

    /// Off by default: the signal keeps its default action (SIGUSR1 ends the process).
    @Test func withoutTheKeyTheSignalKeepsItsDefaultAction() async {
        await #expect(processExitsWith: .signal(SIGUSR1)) {
            startRuntime(twoCoreConfiguration())
            DispatchQueue(label: "test.dump.off").sync {}
            kill(getpid(), SIGUSR1)
            sleepMilliseconds(5000)
        }
    }

    /// `ringlet dump <pid>` sends the signal and prints the file the runtime wrote.
    @Test(.enabled(if: ringletTool != nil, "the ringlet tool is not built next to the tests"))
    func theToolPrintsTheDumpOfAnotherProcess() async {
        await #expect(processExitsWith: .success) {
            var configuration = twoCoreConfiguration()
            configuration.dumpSignal = SIGUSR2
            startRuntime(configuration)
            let queue = DispatchQueue(label: "test.dump.tool")
            queue.suspend()
            queue.async {}
            let (status, output) = runTool(["dump", "\(getpid())", "--signal", "SIGUSR2"])
            #expect(status == 0, "\(output)")
            #expect(output.contains("queue 'test.dump.tool': 1 item(s)"), "\(output)")
            #expect(access("/tmp/ringlet-dump-\(getpid()).txt", F_OK) != 0, "the tool left the file")
            // A signal the process does not catch is refused, not sent.
            let refused = runTool(["dump", "\(getpid())", "--signal", "SIGUSR1"])
            #expect(refused.status != 0 && refused.output.contains("does not catch SIGUSR1"), "\(refused.output)")
            queue.resume()
            settle(queue)
        }
    }
}

/// The `ringlet` executable beside the test bundle, if built.
let ringletTool: String? = {
    var buffer = [CChar](repeating: 0, count: 4096)
    let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    let exe = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    var parts = exe.split(separator: "/", omittingEmptySubsequences: false)
    while let last = parts.last, !last.hasSuffix(".xctest") && parts.count > 1 { parts.removeLast() }
    parts.removeLast()
    let path = parts.joined(separator: "/") + "/ringlet"
    return access(path, X_OK) == 0 ? path : nil
}()

/// Runs the ringlet tool with `arguments`; its exit status and what it wrote (stdout
/// and stderr together).
func runTool(_ arguments: [String]) -> (status: Int32, output: String) {
    guard let tool = ringletTool else { return (-1, "no tool") }
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { return (-1, "pipe failed") }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
    posix_spawn_file_actions_adddup2(&actions, fds[1], 2)
    posix_spawn_file_actions_addclose(&actions, fds[0])
    var argv: [UnsafeMutablePointer<CChar>?] = ([tool] + arguments).map { strdup($0) } + [nil]
    var child: pid_t = 0
    let spawned = posix_spawn(&child, tool, &actions, nil, &argv, environ)
    posix_spawn_file_actions_destroy(&actions)
    for pointer in argv { free(pointer) }
    close(fds[1])
    guard spawned == 0 else {
        close(fds[0])
        return (-1, "posix_spawn failed: \(spawned)")
    }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fds[0], &chunk, chunk.count)
        if n > 0 { output += chunk[0..<n] } else if n == 0 || errno != EINTR { break }
    }
    close(fds[0])
    var status: Int32 = 0
    while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    let exited = status & 0x7f == 0 ? (status >> 8) & 0xff : -1
    return (exited, String(decoding: output, as: UTF8.self))
}
