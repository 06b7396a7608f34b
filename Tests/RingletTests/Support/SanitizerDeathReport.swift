// What a child process of an exit test says when a sanitizer ends it.
//
// Under `make asan` and `make tsan` a child inherits ASAN_OPTIONS / TSAN_OPTIONS, so
// its report goes to log_path.<pid>, and its stderr goes nowhere unless the test
// observes it: the parent would see only `.exitCode(1)` (ASan's exit code, also for
// a leak found at exit) or 66 (TSan's). The C constructor in CRingletTestSupport
// installs `rl_test_report_sanitizer_death` as the sanitizer's death callback; it
// records the report as an issue, which the exit test forwards to the parent's log.

import Glibc
import Testing

/// The most of a report an issue quotes: the error and its first stacks.
private let quotedReportBytes = 12_000

/// Guards against a second death (the callback itself failing).
nonisolated(unsafe) private var reportingSanitizerDeath = false

@_cdecl("rl_test_report_sanitizer_death")
func reportSanitizerDeath() {
    if reportingSanitizerDeath { return }
    reportingSanitizerDeath = true
    let process = getpid()
    guard let logPath = sanitizerLogPath() else {
        Issue.record("a sanitizer ended process \(process): its report went to that process's stderr")
        return
    }
    let path = "\(logPath).\(process)"
    let report: String
    switch readReport(path) {
    case .success(let text): report = text
    case .failure(let errno): report = "(unreadable: errno \(errno.rawValue); with EMFILE the sanitizer could not write it either)"
    }
    Issue.record("a sanitizer ended process \(process) (report \(path)):\n\(report)")
}

/// log_path from ASAN_OPTIONS or TSAN_OPTIONS (options separated by spaces or colons).
private func sanitizerLogPath() -> String? {
    for variable in ["ASAN_OPTIONS", "TSAN_OPTIONS"] {
        guard let value = getenv(variable) else { continue }
        let options = String(cString: value).split(whereSeparator: { $0 == " " || $0 == ":" })
        if let option = options.first(where: { $0.hasPrefix("log_path=") }) {
            return String(option.dropFirst("log_path=".count))
        }
    }
    return nil
}

private struct ReadFailure: Error { let rawValue: Int32 }

/// The report's first `quotedReportBytes`, or errno.
private func readReport(_ path: String) -> Result<String, ReadFailure> {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    if fd < 0 { return .failure(ReadFailure(rawValue: errno)) }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: quotedReportBytes)
    var filled = 0
    while filled < bytes.count {
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
        if count < 0, errno == EINTR { continue }
        if count <= 0 { break }
        filled += count
    }
    let text = String(decoding: bytes.prefix(filled), as: UTF8.self)
    return .success(filled == bytes.count ? text + "\n[… the rest is in the file]" : text)
}
