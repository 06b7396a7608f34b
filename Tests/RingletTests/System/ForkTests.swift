// The child of a fork(2) made after the runtime started has none of the runtime's
// threads: using Ringlet there traps with a message that says so, instead of
// submitting work that never runs and waiting for ever.

import Glibc
import Testing
@testable import Ringlet

@Suite struct ForkTests {
    @Test func usingRingletInTheChildOfAForkTrapsWithTheReason() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            ForkScenarios.asyncInTheChild()
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("in the child of fork()"), "\(text)")
        #expect(text.contains("exec"), "the fix is not named: \(text)")
    }
}

enum ForkScenarios {
    static func asyncInTheChild() {
        startRuntime(RuntimeConfiguration(cores: 2))
        let ready = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { ready.signal() }
        #expect(waited(ready))
        let pid = fork()
        if pid == 0 {
            // The child: this must trap, not hang.
            let group = DispatchGroup()
            DispatchQueue.global().async(group: group) {}
            group.wait()
            _exit(0)
        }
        #expect(pid > 0)
        var status: Int32 = 0
        let reaped = eventually { waitpid(pid, &status, WNOHANG) == pid }
        if !reaped {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
        }
        #expect(reaped, "the child of fork() hung")
        // Killed by SIGABRT (the trap): the low 7 bits of the status hold the signal.
        #expect(status & 0x7f == SIGABRT, "status \(status)")
    }
}
