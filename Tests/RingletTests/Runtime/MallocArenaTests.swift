// `mallocArenas`: the runtime caps the C library's malloc arenas at start, before its
// threads exist. glibc gives each thread that first allocates or frees an arena of its
// own (a page or more resident each) until there are 8 per core; every pool thread
// allocates its context at start and frees the closures it runs. Each test counts the
// arenas glibc lists (malloc_info) in a child process with its own pool, so the cap
// stays there; the second shows that the count does see the arenas the pool makes.

import CRingletTestSupport
import Testing
@testable import Ringlet

/// Starts a 2-core pool (4 workers, 2 reserve, the manager: each allocates its context
/// at start) with `arenas` as the cap, runs items that allocate and free on a
/// concurrent queue, and returns the arenas made meanwhile.
private func arenasMadeByThePool(cap arenas: Int) -> Int {
    let before = Int(rl_test_malloc_arenas())
    startRuntime(RuntimeConfiguration(cores: 2, workersPerCore: 2, reservePerCore: 1, mallocArenas: arenas))
    let group = DispatchGroup()
    let queue = DispatchQueue(label: "test.arenas", attributes: .concurrent)
    for _ in 0..<64 {
        queue.async(group: group) {
            let boxes = (0..<64).map { UncheckedBox($0) }
            withExtendedLifetime(boxes) {}
        }
    }
    #expect(waited(group))
    return Int(rl_test_malloc_arenas()) - before
}

@Suite(.enabled(if: !sanitizerActive, "a sanitizer's allocator replaces glibc's arenas"))
struct MallocArenaTests {
    @Test func theCapKeepsPoolThreadsInTheArenasThatExist() async {
        await #expect(processExitsWith: .success) {
            #expect(rl_test_malloc_arenas() >= 1, "malloc_info lists no arena")
            let made = arenasMadeByThePool(cap: 1)
            #expect(made == 0, "the pool's threads made \(made) arenas with mallocArenas = 1")
        }
    }

    @Test func withoutTheCapEachPoolThreadMakesOne() async {
        await #expect(processExitsWith: .success) {
            let made = arenasMadeByThePool(cap: 0)
            #expect(made >= 4, "the pool's threads made only \(made) arenas with the C library's limit")
        }
    }
}
