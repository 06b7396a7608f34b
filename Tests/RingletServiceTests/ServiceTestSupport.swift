// What the service suites share: bounded waits, endpoints of their own, bytes.
// Every wait is bounded: a broken session makes a test fail, never hang.

import CRingletTestSupport
import Glibc
import Testing
@_spi(RingletNet) import Ringlet
@testable import RingletService

/// How long a test waits for what normally takes milliseconds (longer under a sanitizer).
let patienceSeconds = rl_test_sanitizer_active() != 0 ? 40.0 : 10.0

/// A value a handler delivers, waited for with a bound.
final class Delivered<Value: Sendable>: @unchecked Sendable {
    private let lock = ServiceLock()
    private var values: [Value] = []
    private let arrived = DispatchSemaphore(value: 0)

    func put(_ value: Value) {
        lock.withLock { values.append(value) }
        arrived.signal()
    }

    /// The next value (in arrival order), nil when none came within the patience.
    func next(sourceLocation: SourceLocation = #_sourceLocation) -> Value? {
        guard arrived.wait(timeout: .now() + patienceSeconds) == .success else {
            Issue.record("nothing was delivered within \(patienceSeconds) s", sourceLocation: sourceLocation)
            return nil
        }
        return lock.withLock { values.removeFirst() }
    }

    var count: Int { lock.withLock { values.count } }
}

/// Polls `condition` every millisecond until it holds or the patience runs out.
func eventually(sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool) -> Bool {
    let start = DispatchTime.now()
    while DispatchTime.now() < start + patienceSeconds {
        if condition() { return true }
        usleep(1000)
    }
    Issue.record("the condition did not come true within \(patienceSeconds) s", sourceLocation: sourceLocation)
    return false
}

private let endpointCounter = ServiceLock()
nonisolated(unsafe) private var endpointNumber = 0
/// This run's mark in its endpoints' names: a process of another run (in another PID
/// namespace, sharing the network namespace or /tmp) may have this one's process ID.
let runMark = String(UInt32.random(in: 0...UInt32.max), radix: 16)

/// An abstract endpoint no other test (or run) uses.
func uniqueEndpoint(_ name: String = #function) -> ServiceEndpoint {
    let number = endpointCounter.withLock { () -> Int in
        endpointNumber += 1
        return endpointNumber
    }
    let cleaned = String(name.prefix { $0 != "(" })
    return .abstract("ringlet-test.\(getpid()).\(runMark).\(number).\(cleaned)")
}

func bytes(_ text: String) -> DispatchData {
    Array(text.utf8).withUnsafeBytes { DispatchData(bytes: $0) }
}

func text(_ data: DispatchData) -> String {
    String(decoding: Array(data), as: UTF8.self)
}

/// The kernel scheduling policy of the calling thread (SCHED_IDLE is 5).
var currentPolicy: Int32 { sched_getscheduler(0) }

/// A listener whose sessions answer each request with `reply(message)`, recording
/// each message, and the sessions it made.
final class EchoService: @unchecked Sendable {
    let listener: ServiceListener
    let endpoint: ServiceEndpoint
    let messages = Delivered<ServiceMessage>()
    let endings = Delivered<ServiceError>()
    let sessions = Delivered<ServiceSession>()

    init(endpoint: ServiceEndpoint = uniqueEndpoint(), targetQueue: DispatchQueue = .global(),
         options: ServiceOptions = ServiceOptions(),
         reply: @escaping @Sendable (ServiceMessage) -> DispatchData? = { $0.payload }) throws {
        self.endpoint = endpoint
        let messages = self.messages, endings = self.endings, sessions = self.sessions
        listener = try ServiceListener(endpoint: endpoint, targetQueue: targetQueue, options: options) { session in
            session.setMessageHandler { message in
                messages.put(message)
                if message.expectsReply, let answer = reply(message) { try? message.reply(answer) }
            }
            session.setCancellationHandler { endings.put($0) }
            sessions.put(session)
        }
    }

    deinit { listener.cancel() }
}

/// Waits until no socket request is on the ring: what a child process does last, after
/// cancelling its listeners and sessions, so that nothing the ring still holds (an
/// accept's handler, a receive's) is left at exit — LeakSanitizer cannot see the ring's
/// references and would report what they hold.
func settleSockets(sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(eventually(sourceLocation: sourceLocation) { Runtime.current.statistics.socketRequestsInFlight == 0 },
            sourceLocation: sourceLocation)
}

/// Records what a failed exit test's child wrote on stderr (its failed expectations),
/// which the parent's issue does not show.
func reportChildErrors(_ result: ExitTest.Result?, expected: ExitStatus = .exitCode(0),
                       sourceLocation: SourceLocation = #_sourceLocation) {
    guard let result, result.exitStatus != expected else { return }
    let text = String(decoding: result.standardErrorContent, as: UTF8.self)
    if !text.isEmpty { Issue.record("the child wrote:\n\(text)", sourceLocation: sourceLocation) }
}

/// A folder of this test's own under /tmp (mode 0700), for socket files; `body` gets its
/// path and the folder is removed with what is left in it afterwards.
func withPrivateFolder(_ body: (String) throws -> Void) throws {
    var template = Array("/tmp/ringlet-test-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    let folder = try #require(made.map { String(cString: $0) }, "mkdtemp under /tmp failed: errno \(errno)")
    defer {
        if let entries = opendir(folder) {
            while let entry = readdir(entries) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." { unlink(folder + "/" + name) }
            }
            closedir(entries)
        }
        rmdir(folder)
    }
    try body(folder)
}
