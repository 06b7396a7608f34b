import CRingletTestSupport
import Ringlet

// Board profiles in the checks program, so that the parser is exercised in Embedded
// Swift and on the boards themselves (`make cross`/`make sim`): every built-in profile
// parses, errors name the line and key, this machine's choice loads, detection picks
// the board the emulated machine stands for, and on a big.LITTLE machine each worker
// band runs on its cores.

/// Byte comparison: String == would need Unicode tables in Embedded builds.
private func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

/// The environment variable `name`, or nil.
private func environment(_ name: String) -> String? {
    guard let value = rl_test_environment(name) else { return nil }
    return String(cString: value)
}

/// Adds the board-profile checks to `harness`.
func runBoardChecks(_ harness: CheckHarness) {
    let machine = MachineFacts(onlineCPUs: 4, memoryMegabytes: 2048)

    harness.run("every built-in board profile parses and fits its memory budget") {
        for name in BoardProfile.builtInNames {
            do throws(BoardProfileError) {
                let profile = try BoardProfile.named(name, machine: machine)
                if !same(profile.board, name) { return "\(name) calls itself \(profile.board)" }
                if !profile.memoryPlan.fitsBudget { return "\(name) exceeds its memory budget" }
            } catch {
                return "\(name): \(error.description)"
            }
        }
        return nil
    }

    harness.run("profile errors name the line and the key") {
        let text = "# a board\ncores = 2\nworkerPerCore = 2\n"
        do throws(BoardProfileError) {
            _ = try BoardProfile.parse(text, file: "checks.profile", machine: machine)
            return "a misspelt key was accepted"
        } catch {
            let expected = "checks.profile:3: key 'workerPerCore': unknown key; did you mean 'workersPerCore'?"
            return error.kind == .unknownKey && same(error.description, expected) ? nil : "got: \(error.description)"
        }
    }

    harness.run("the board chosen for this machine loads") {
        do throws(BoardProfileError) {
            let selection = try BoardSelection.fromEnvironment()
            print("     board: \(selection.profile.board) (\(selection.reason))")
            return nil
        } catch {
            return error.description
        }
    }

    // `make sim` names the board the emulated machine stands for; where it leaves
    // RINGLET_BOARD unset (big.LITTLE boards, whose device tree carries their core
    // capacities, and generic) the runtime had to detect it.
    harness.run("the runtime started with the board this machine stands for") {
        guard let expected = environment("RINGLET_EXPECT_BOARD") else {
            print("     (RINGLET_EXPECT_BOARD unset: no board to expect here)")
            return nil
        }
        guard let profile = Runtime.current.profile else { return "the runtime started without a board profile" }
        if !same(profile.board, expected) { return "expected \(expected), the runtime chose \(profile.board)" }
        let named = environment("RINGLET_BOARD") != nil
        print("     \(expected), \(named ? "named by RINGLET_BOARD" : "detected from the machine")")
        return nil
    }

    harness.run("on big.LITTLE, each worker band runs on its cores") { checkBandPlacement() }
}

/// Where big.LITTLE placement is in force, runs busy items at each QoS on the global
/// queues and checks, from inside each item, the CPU it runs on and its thread's
/// affinity: default and higher on the big cores, utility and background on the small
/// ones (Boards/README.md, "big.LITTLE placement"). When the kernel reports unequal
/// cpu_capacity values, the placement must be the one they describe.
private func checkBandPlacement() -> String? {
    let capacities = MachineFacts.current().coreCapacities
    let fromKernel = CorePlacement(capacities: capacities)
    guard let placement = Runtime.current.placement else {
        if fromKernel != nil {
            return "the kernel reports cpu_capacity \(joined(capacities)) but no worker is pinned"
        }
        print("     (no big.LITTLE placement here: nothing to check)")
        return nil
    }
    if let fromKernel, fromKernel != placement {
        return "the kernel's cpu_capacity \(joined(capacities)) makes CPUs \(cpuList(mask(fromKernel.bigCores))) big, "
            + "the runtime pinned the high band to \(cpuList(mask(placement.bigCores)))"
    }
    let big = mask(placement.bigCores), small = mask(placement.smallCores)
    let bands: [(qos: DispatchQoS.QoSClass, cpus: UInt64, name: String)] = [
        (.userInteractive, big, "user-interactive"), (.userInitiated, big, "user-initiated"),
        (.default, big, "default"), (.utility, small, "utility"), (.background, small, "background"),
    ]
    for band in bands {
        // Per item: the CPUs it ran on and its thread's affinity, stored without a lock
        // (an item that waited would let a reserve thread cover its worker; that one
        // takes the band's cores too, but the check should not depend on it). A reserve
        // thread may still run some items even so, with every CPU in its affinity,
        // before reserve threads take their work's cores (most likely when the stall
        // watch covers a worker that looks blocked in the kernel,
        // Scheduler+KernelCover.swift).
        let items = 24
        let ran = (0..<items).map { _ in SharedCounter() }, pinned = (0..<items).map { _ in SharedCounter() }
        let group = DispatchGroup()
        // More items than workers of a band, each busy for a few milliseconds, so that
        // every worker of the band takes some.
        for item in 0..<items {
            DispatchQueue.global(qos: band.qos).async(group: group) {
                let until = DispatchTime.now() + .milliseconds(4)
                var cpus: UInt64 = 0
                while DispatchTime.now() < until {
                    let cpu = rl_test_current_cpu()
                    if cpu >= 0 && cpu < 64 { cpus |= 1 << UInt64(cpu) }
                }
                ran[item].increment(by: Int(bitPattern: UInt(cpus)))
                pinned[item].increment(by: Int(bitPattern: UInt(rl_test_affinity_mask())))
            }
        }
        if group.wait(timeout: timeout) != .success { return "\(band.name) items timed out" }
        var ranOn: UInt64 = 0
        for item in 0..<items {
            let cpus = UInt64(UInt(bitPattern: ran[item].value)), affinity = UInt64(UInt(bitPattern: pinned[item].value))
            if affinity != band.cpus { return "a \(band.name) item's thread has affinity \(cpuList(affinity)), expected \(cpuList(band.cpus))" }
            if cpus & ~band.cpus != 0 { return "a \(band.name) item ran on CPU \(cpuList(cpus & ~band.cpus)), outside \(cpuList(band.cpus))" }
            ranOn |= cpus
        }
        print("     \(band.name): \(items) items ran on CPUs \(cpuList(ranOn)) (pinned to \(cpuList(band.cpus)))")
    }
    return nil
}

/// "414,414,1024" style list.
private func joined(_ values: [Int]) -> String {
    var text = ""
    for value in values { text += (text.isEmpty ? "" : ",") + "\(value)" }
    return text
}

/// The bit mask of `cpus`.
private func mask(_ cpus: [Int]) -> UInt64 { cpus.reduce(UInt64(0)) { $0 | (1 << UInt64($1)) } }

/// "4-7" style list of the CPUs in `mask`.
private func cpuList(_ mask: UInt64) -> String {
    var text = ""
    var cpu = 0
    while cpu < 64 {
        if mask & (1 << UInt64(cpu)) == 0 { cpu += 1; continue }
        var last = cpu
        while last + 1 < 64 && mask & (1 << UInt64(last + 1)) != 0 { last += 1 }
        text += (text.isEmpty ? "" : ",") + (last == cpu ? "\(cpu)" : "\(cpu)-\(last)")
        cpu = last + 1
    }
    return text.isEmpty ? "none" : text
}
