// big.LITTLE placement: with unequal `coreCapacities`, high-band workers run on the
// big cores and utility/background workers on the small ones; reserve workers start
// free and take the cores of the band whose work they run. Read back from the kernel
// (sched_getaffinity of each worker thread) on a profile shaped for this 2-CPU machine.
// Each runtime starts in a child process.

import Glibc
import Testing
@testable import Ringlet

@Suite struct BoardPlacementTests {
    @Test func unequalCapacitiesMakeAPlacement() {
        let placement = CorePlacement(capacities: [414, 414, 1024, 1024])
        #expect(placement?.bigCores == [2, 3] && placement?.smallCores == [0, 1])
        #expect(placement?.cpus(for: .high) == [2, 3] && placement?.cpus(for: .background) == [0, 1])
        #expect(placement?.cpus(for: .utility) == [0, 1] && placement?.cpus(for: .reserve) == nil)
        #expect(CorePlacement(capacities: [1024, 1024]) == nil && CorePlacement(capacities: []) == nil)
        // Three tiers: only the biggest cores are big.
        #expect(CorePlacement(capacities: [200, 600, 1024])?.smallCores == [0, 1])
    }

    @Test func aPlacementForCPUsThisMachineLacksIsDropped() {
        let eight = CorePlacement(capacities: [414, 414, 414, 414, 1024, 1024, 1024, 1024])
        #expect(CorePlacement.forMachine(eight, board: "orange-pi-5", onlineCPUs: 2) == nil)
        #expect(CorePlacement.forMachine(eight, board: "orange-pi-5", onlineCPUs: 8) == eight)
    }

    @Test func workersArePinnedByBand() async {
        guard ThreadControl.onlineCPUs >= 2 else { return }  // needs two CPUs to place on
        await #expect(processExitsWith: .success) { PlacementScenarios.pinnedByBand() }
    }

    @Test func aReserveWorkerRunsOnTheCoresOfTheWorkItCovers() async {
        guard ThreadControl.onlineCPUs >= 2 else { return }  // needs two CPUs to place on
        await #expect(processExitsWith: .success) { PlacementScenarios.reserveTakesTheCoresOfItsWork() }
    }

    @Test func aProfileForABiggerBoardRunsUnpinnedWithOneWarning() async {
        guard ThreadControl.onlineCPUs < 8 else { return }
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            PlacementScenarios.foreignBoard()
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("board profile 'orange-pi-5' places workers on CPUs up to 7"), "\(text)")
        #expect(text.components(separatedBy: "places workers").count == 2, "more than one warning: \(text)")
    }

    @Test func aBadRingletBoardTrapsWithTheProfileError() async {
        let result = await #expect(processExitsWith: .signal(sigabrt), observing: [\.standardErrorContent]) {
            PlacementScenarios.firstUseWithBoard("raspberry-pi-9")
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("RINGLET_BOARD=raspberry-pi-9 cannot be used"), "\(text)")
        #expect(text.contains("known boards: raspberry-pi-zero-2w"), "\(text)")
        #expect(text.contains("unset it to detect the board"), "\(text)")
    }

    @Test func ringletBoardChoosesTheProfileOnFirstUse() async {
        await #expect(processExitsWith: .success) { PlacementScenarios.firstUseWithBoard("watch-class") }
    }
}

enum PlacementScenarios {
    static func pinnedByBand() {
        let profile: BoardProfile
        do {
            profile = try BoardProfile.parse("cores = 2\ncoreCapacities = 512,1024\n", file: "placement.profile")
            try Runtime.start(profile: profile)
        } catch {
            Issue.record("start: \(error)")
            return
        }
        let runtime = Runtime.current
        #expect(runtime.placement == CorePlacement(capacities: [512, 1024]))
        #expect(runtime.profile?.file == "placement.profile")
        for worker in runtime.scheduler.workers {
            let cpus = MachineFiles.affinity(ofThread: worker.threadID)
            switch worker.band {
            case .high: #expect(cpus == [1], "\(worker.name) (high) runs on \(cpus ?? [])")
            case .utility, .background: #expect(cpus == [0], "\(worker.name) (\(worker.band.name)) runs on \(cpus ?? [])")
            case .reserve: #expect((cpus?.count ?? 0) >= 2, "\(worker.name) (reserve) runs on \(cpus ?? [])")
            }
        }
        // Work still runs at every QoS.
        let group = DispatchGroup()
        for qos in [DispatchQoS.QoSClass.background, .utility, .default, .userInteractive] {
            DispatchQueue.global(qos: qos).async(group: group) {}
        }
        #expect(group.wait(timeout: deadline()) == .success)
    }

    /// Every worker of a band blocked in a Ringlet wait, so that the next item of that
    /// band's QoS runs on a reserve worker: it must run on that band's cores. First the
    /// high band (then a user-interactive item must stay on the big core), then the
    /// utility band too (then a utility item must move to the small core).
    static func reserveTakesTheCoresOfItsWork() {
        do {
            try Runtime.start(profile: try BoardProfile.parse("cores = 2\ncoreCapacities = 512,1024\n",
                                                              file: "placement.profile"))
        } catch {
            Issue.record("start: \(error)")
            return
        }
        let workers = Runtime.current.scheduler.workers
        let release = DispatchSemaphore(value: 0)
        let blockers = DispatchGroup()
        var held = 0
        defer {
            for _ in 0..<held { release.signal() }
            #expect(waited(blockers))
        }
        /// Every worker of `band` and of the reserve is parked or blocked: the next item
        /// at the band's QoS wakes a parked worker of the band, not a reserve worker (a
        /// reserve worker still looking for work after the last probe would take it).
        func settled(_ band: WorkerBand) -> Bool {
            eventually {
                Runtime.current.scheduler.lock.withLock {
                    workers.allSatisfy { ($0.band != band && $0.band != .reserve) || $0.state == .parked
                        || $0.state == .blocked }
                }
            }
        }
        /// Blocks every worker of `band` with items at `qos`, one at a time (each taken
        /// before the next is submitted, so an idle worker of the band takes it). An item
        /// that a reserve worker took anyway returns at once: blocked there, it would hold
        /// the reserve worker the probes need.
        func holdEvery(_ band: WorkerBand, qos: DispatchQoS.QoSClass) -> Bool {
            let needed = workers.filter { $0.band == band }.count
            var blocked = 0, attempts = 0
            while blocked < needed && attempts < workers.count * 2 {
                attempts += 1
                guard settled(band) else { return false }
                let started = DispatchSemaphore(value: 0)
                let ranOn = Recorder<WorkerBand?>()
                DispatchQueue.global(qos: qos).async(group: blockers) {
                    let ranOnBand = ThreadContext.current.worker?.band
                    ranOn.append(ranOnBand)
                    started.signal()
                    if ranOnBand == band { _ = release.wait(timeout: deadline()) }
                }
                held += 1
                guard waited(started) else { return false }
                if ranOn.values.first == band { blocked += 1 }
            }
            return blocked == needed
        }
        /// Runs one item at `qos`: the band of its thread and that thread's CPUs.
        func probe(_ qos: DispatchQoS.QoSClass) -> (band: WorkerBand?, cpus: [Int]?) {
            let seen = Recorder<(WorkerBand?, [Int]?)>()
            let done = DispatchSemaphore(value: 0)
            DispatchQueue.global(qos: qos).async {
                seen.append((ThreadContext.current.worker?.band, MachineFiles.affinity(ofThread: ThreadControl.threadID)))
                done.signal()
            }
            guard waited(done), let (band, cpus) = seen.values.first else { return (nil, nil) }
            return (band, cpus)
        }
        #expect(holdEvery(.high, qos: .userInitiated), "could not block the high band")
        let interactive = probe(.userInteractive)
        #expect(interactive.band == .reserve && interactive.cpus == [1],
                "a user-interactive item with the high band blocked ran on \(interactive)")
        #expect(holdEvery(.utility, qos: .utility), "could not block the utility band")
        let utility = probe(.utility)
        #expect(utility.band == .reserve && utility.cpus == [0],
                "a utility item with the utility band blocked ran on \(utility)")
    }

    static func foreignBoard() {
        do {
            try Runtime.start(profile: BoardProfile.named("orange-pi-5"))
        } catch {
            Issue.record("start: \(error)")
            return
        }
        #expect(Runtime.current.placement == nil)
        #expect(Runtime.current.configuration.cores == 8)
        for worker in Runtime.current.scheduler.workers {
            #expect((MachineFiles.affinity(ofThread: worker.threadID)?.count ?? 0) == ThreadControl.onlineCPUs)
        }
    }

    static func firstUseWithBoard(_ board: String) {
        setenv("RINGLET_BOARD", board, 1)
        let ran = DispatchSemaphore(value: 0)
        DispatchQueue(label: "test.board.first-use").async { ran.signal() }
        #expect(waited(ran))
        #expect(Runtime.current.profile?.board == board)
        #expect(Runtime.current.configuration == (try? BoardProfile.named(board).configuration))
    }
}
