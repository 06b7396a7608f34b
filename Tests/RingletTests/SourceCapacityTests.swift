// The `sources` pool (profile key `sources`): at most that many dispatch sources are
// active at once; a finished (cancelled) source gives its place back, and activating
// one too many traps naming the source's queue and the key to raise. Child processes.

import Testing
@testable import Ringlet

@Suite struct SourceCapacityTests {
    @Test func theKeyIsParsedAndValidated() throws {
        let profile = try BoardProfile.parse("sources = 12\n", file: "test.profile", machine: testMachine)
        #expect(profile.configuration.sources == 12 && profile.origin(of: .sources) == .file(line: 1))
        let error = try #require(profileError(["cores = 2", "sources = 0"]))
        #expect(error.kind == .outOfRange && error.line == 2 && error.key == "sources")
    }

    @Test func cancelledSourcesGiveTheirPlaceBack() async {
        await #expect(processExitsWith: .success) { SourceCapacityScenarios.reuse() }
    }

    @Test func oneSourceTooManyTrapsNamingTheQueueAndTheKey() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            SourceCapacityScenarios.overflow()
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("timer source (queue 'test.sources.full') would make 4 active dispatch sources"), "\(text)")
        #expect(text.contains("the board profile key 'sources' allows 3"), "\(text)")
    }
}

enum SourceCapacityScenarios {
    static func start() {
        do { try Runtime.start(configuration: RuntimeConfiguration(cores: 2, sources: 3)) } catch {
            Issue.record("start: \(error)")
        }
    }

    /// Three sources, one cancelled and finished, then a fourth fits.
    static func reuse() {
        start()
        let queue = DispatchQueue(label: "test.sources.reuse")
        let sources = (0..<3).map { _ in DispatchSource.makeUserDataAddSource(queue: queue) }
        sources.forEach { $0.activate() }
        let finished = DispatchSemaphore(value: 0)
        sources[0].setCancelHandler { finished.signal() }
        sources[0].cancel()
        #expect(waited(finished))
        #expect(eventually { RuntimeParts.shared.manager.takeUnretainedValue().activeSources.load(ordering: .relaxed) == 2 })
        let fourth = DispatchSource.makeTimerSource(queue: queue)
        fourth.schedule(deadline: .now() + 60)
        fourth.activate()
        #expect(RuntimeParts.shared.manager.takeUnretainedValue().activeSources.load(ordering: .relaxed) == 3)
        for source in sources.dropFirst() { source.cancel() }
        fourth.cancel()
    }

    static func overflow() {
        start()
        let queue = DispatchQueue(label: "test.sources.full")
        let sources = (0..<3).map { _ in DispatchSource.makeUserDataOrSource(queue: queue) }
        sources.forEach { $0.activate() }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + 60)
        timer.activate()  // traps
    }
}
