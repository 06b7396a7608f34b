// Reading a profile (or a sysfs or /proc entry) never blocks: what is not a regular
// file — a FIFO above all, whose open waits for a writer — is refused with the path
// and what it is, through BoardProfileError, and RINGLET_BOARD naming one stops the
// process with that message instead of hanging at start.

import Foundation
import Glibc
import Testing
@testable import Ringlet

/// A FIFO in the temporary folder, removed at deinit.
final class TemporaryFIFO {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "ringlet-fifo-\(UUID().uuidString).profile"
        guard mkfifo(path, 0o600) == 0 else { throw Errno(rawValue: errno) }
    }

    deinit { unlink(path) }
}

@Suite struct ProfileFileTypeTests {
    @Test func aFIFOIsRefusedWithoutWaitingForAWriter() throws {
        let fifo = try TemporaryFIFO()
        let outcome = Recorder<String>()
        let path = fifo.path
        Thread {
            do throws(BoardProfileError) {
                _ = try BoardProfile.load(path: path, machine: testMachine)
                outcome.append("loaded")
            } catch {
                outcome.append(error.description)
            }
        }.start()
        let answered = eventually(within: 5) { outcome.count > 0 }
        if !answered {
            // The load is stuck in open(2): a writer that comes and goes lets it see
            // end of file, so this test ends instead of leaving the thread blocked.
            let writer = open(path, O_RDWR)
            close(writer)
            _ = eventually { outcome.count > 0 }
        }
        #expect(answered, "BoardProfile.load blocked on a FIFO until a writer came")
        let text = outcome.values.first ?? ""
        #expect(text.hasPrefix("\(path): is a FIFO, not a profile file; give the path of a regular .profile file"),
                "\(text)")
    }

    @Test func otherFilesThatAreNotProfilesSayWhatTheyAre() throws {
        let directory = NSTemporaryDirectory() + "ringlet-dir-\(UUID().uuidString).profile"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for (path, what) in [(directory, "a directory"), ("/dev/null", "a character device")] {
            do {
                _ = try BoardProfile.load(path: path, machine: testMachine)
                Issue.record("\(path) was read as a profile")
            } catch {
                #expect(error.kind == .unreadable && error.file == path && error.line == 0)
                #expect(error.description.hasPrefix("\(path): is \(what), not a profile file"), "\(error)")
            }
        }
    }

    @Test func sysfsAndProcEntriesAreRegularFilesAndStillRead() throws {
        // The kernel reports pseudo-files as regular: they must not be refused.
        let status = try MachineFiles.read(path: "/proc/self/status", limit: 65536)
        #expect(String(decoding: status, as: UTF8.self).contains("Threads:"))
        let online = try MachineFiles.read(path: "/sys/devices/system/cpu/online", limit: 64)
        #expect(!online.isEmpty)
    }

    @Test func ringletBoardNamingAFIFOStopsTheProcessWithTheFileAndWhatToDo() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            // The old blocking open would hang here; SIGALRM ends the child instead.
            alarm(20)
            let path = "/tmp/ringlet-board-fifo-\(getpid()).profile"
            guard mkfifo(path, 0o600) == 0 else { exit(3) }
            setenv("RINGLET_BOARD", path, 1)
            _ = Runtime.current
        }
        // The child stops before it can remove its FIFO.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/tmp")) ?? []
            where name.hasPrefix("ringlet-board-fifo-") { unlink("/tmp/" + name) }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("RINGLET_BOARD=/tmp/ringlet-board-fifo-"), "\(text)")
        #expect(text.contains("is a FIFO, not a profile file"), "\(text)")
    }
}
