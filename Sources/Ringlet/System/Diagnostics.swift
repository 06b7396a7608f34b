import CRinglet
import Synchronization

/// Writes one line to stderr without Foundation or stdio buffering, so that messages
/// reach the terminal even when the process is about to abort.
func writeToStandardError(_ message: String) {
    var line = message
    // Compare bytes, not Characters: String comparison would pull Unicode tables
    // into Embedded builds.
    if line.utf8.last != 10 { line += "\n" }
    var utf8 = line.utf8CString
    utf8.withUnsafeMutableBufferPointer { buffer in
        rl_write_stderr(buffer.baseAddress, Int64(buffer.count - 1))
    }
    #if DEBUG
    DiagnosticsObserver.notify(line)
    #endif
}

/// Reports misuse of the API and stops the process, as GCD does for client bugs.
/// The message names the object (queue label, semaphore, group) and what to do; it is
/// printed to stderr as "Ringlet: <message>" before SIGABRT, in every build mode and in
/// Embedded Swift (whose `fatalError` drops its message).
func ringletMisuse(_ message: String) -> Never {
    writeToStandardError("Ringlet: \(message)" + currentItemTrail())
    rl_abort()
}

/// " (this thread runs an item of queue 'x', enqueued from 'y' ← thread main ...)",
/// or "" when the thread runs no item: where the misusing code came from. Only tries
/// the queue registry's lock, which the trapping thread may hold.
private func currentItemTrail() -> String {
    guard let context = ThreadContext.currentIfPresent else { return "" }
    let crumb = Breadcrumb(raw: context.runningCrumb.load(ordering: .relaxed))
    guard let chain = crumb.chainDescription(tryOnly: true) else { return "" }
    let queue = context.currentQueue.map { " of queue '\($0.label)'" } ?? ""
    return " (this thread runs an item\(queue), \(chain))"
}

/// Reports a broken internal invariant: a bug in Ringlet itself.
func ringletBug(_ message: String) -> Never {
    writeToStandardError("Ringlet internal error (please report): \(message)")
    rl_abort()
}

/// A one-time warning line ("Ringlet: warning: ..."); used when a kernel hint fails.
func ringletWarning(_ message: String) {
    writeToStandardError("Ringlet: warning: \(message)")
}

/// A flag that lets one caller through, for one-time warnings.
// @unchecked Sendable: `done` under `lock`.
final class WarnOnce: @unchecked Sendable {
    private let lock = FutexLock()
    private var done = false

    func claim() -> Bool {
        lock.withLock {
            if done { return false }
            done = true
            return true
        }
    }
}

#if DEBUG
/// Tests: sees every line Ringlet writes to stderr, so a test can wait for a report
/// (an event) instead of sleeping for as long as it might take.
enum DiagnosticsObserver {
    static let hook = TestHook<String, Void>()

    static func notify(_ line: String) { _ = hook.call(line) }
}
#endif
