import ArgumentParser
import Foundation

/// `ringlet dump <pid>`: asks a running Ringlet program for its live dump and prints it.
///
/// How: the program opts in with the board-profile key `dumpSignal` (off by default).
/// The tool checks in /proc/<pid>/status that the process catches that signal (so it
/// never kills a process that did not opt in), removes a stale
/// `/tmp/ringlet-dump-<pid>.txt`, sends the signal, waits for the runtime's manager
/// thread to write the file (whole: a temporary then a rename), prints it and removes
/// it. The program also writes the dump to its own stderr. Needs only the right to
/// signal the process (the same user, or root).
struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Print the live dump of a running Ringlet program (it must set the profile key dumpSignal).")

    @Argument(help: "The process id of the program.")
    var pid: Int32

    @Option(name: .long, help: ArgumentHelp(
        "The signal the program's profile names in 'dumpSignal': SIGQUIT, SIGUSR1 or SIGUSR2.", valueName: "signal"))
    var signal: String = "SIGUSR1"

    @Option(name: .long, help: "Seconds to wait for the dump.")
    var timeout: Double = 5

    static let signals: [String: Int32] = ["SIGQUIT": 3, "SIGUSR1": 10, "SIGUSR2": 12]

    func run() throws {
        let name = signal.uppercased().hasPrefix("SIG") ? signal.uppercased() : "SIG" + signal.uppercased()
        guard let signo = Self.signals[name] else {
            throw ValidationError("--signal \(signal): expected SIGQUIT, SIGUSR1 or SIGUSR2 (what 'dumpSignal' accepts)")
        }
        guard let caught = Self.caughtSignals(pid) else {
            throw ValidationError("no process \(pid) (or /proc/\(pid)/status is unreadable)")
        }
        // Sending a signal the process does not catch would run its default action.
        guard caught & (UInt64(1) << UInt64(signo - 1)) != 0 else {
            throw ValidationError("process \(pid) does not catch \(name), so sending it would stop the process "
                + "instead of asking for a dump. Set 'dumpSignal = \(name)' in the program's board profile (or "
                + "RuntimeConfiguration.dumpSignal) and restart it; if it uses another signal, pass --signal")
        }
        let path = "/tmp/ringlet-dump-\(pid).txt"
        try? FileManager.default.removeItem(atPath: path)
        guard kill(pid, signo) == 0 else {
            throw ValidationError("kill(\(pid), \(name)) failed: \(String(cString: strerror(errno)))")
        }
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if let text = try? String(contentsOfFile: path, encoding: .utf8) {
                print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
                try? FileManager.default.removeItem(atPath: path)
                return
            }
            usleep(10_000)
        }
        throw ValidationError("process \(pid) caught \(name) but wrote no dump to \(path) within \(timeout) s: it may "
            + "use \(name) for itself (not as 'dumpSignal'), or not run Ringlet")
    }

    /// SigCgt of /proc/<pid>/status: the signals the process has handlers for.
    static func caughtSignals(_ pid: Int32) -> UInt64? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("SigCgt:") {
            return UInt64(line.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16)
        }
        return nil
    }
}
