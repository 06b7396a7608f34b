import ArgumentParser
import Foundation
import Ringlet

/// `ringlet board`: which board profile the runtime would use here and why, every key
/// with its value and origin, the kernel's io_uring features, and what the runtime
/// creates (threads per band, the kernel backend and why, placement, pools, memory
/// against the budget).
/// Starts no runtime: it only reads files and probes io_uring with small rings.
struct BoardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "board",
        abstract: "Show the board profile in force, the kernel's io_uring features and what the runtime creates.")

    @Option(name: .long, help: ArgumentHelp(
        "A board name (built-in, or in RINGLET_BOARDS_DIR) or a .profile path, instead of RINGLET_BOARD and detection.",
        valueName: "name or path"))
    var profile: String?

    func run() throws {
        let machine = MachineFacts.current()
        let selection: BoardSelection
        do {
            if let profile {
                selection = try BoardSelection.choose(board: profile, boardsDirectory:
                    ProcessInfo.processInfo.environment["RINGLET_BOARDS_DIR"], machine: machine)
            } else {
                selection = try BoardSelection.fromEnvironment(machine: machine)
            }
        } catch {
            throw ValidationError(error.description)
        }
        let chosen = selection.profile
        print("Board: \(chosen.board) (\(chosen.file))")
        print("  why: \(selection.reason)")
        printMachine(machine, profile: chosen)
        printKeys(chosen)
        printIOUring(IOUringFeatures.probe())
        try printPlan(chosen, machine: machine)
    }

    private func printMachine(_ machine: MachineFacts, profile: BoardProfile) {
        let kernel = MachineFacts.kernelRelease
        let capacities = machine.coreCapacities.isEmpty ? "none in sysfs"
            : machine.coreCapacities.map(String.init).joined(separator: ",")
        print("This machine")
        print("  model: \(machine.deviceTreeModel.isEmpty ? "(no /proc/device-tree/model)" : machine.deviceTreeModel)")
        print("  \(machine.onlineCPUs) online CPUs, cpu_capacity \(capacities), \(machine.memoryMegabytes) MiB, "
            + "\(machine.pageBytes)-byte pages")
        let verdict = kernelAtLeast(kernel, profile.minimumKernel) ? "meets" : "is OLDER than"
        print("  kernel \(kernel) \(verdict) the profile's minimumKernel \(profile.minimumKernel)")
    }

    private func printKeys(_ profile: BoardProfile) {
        print("Profile keys (value, and where it came from)")
        let width = BoardProfileKey.allCases.map { $0.name.count }.max() ?? 0
        for key in BoardProfileKey.allCases {
            let origin: String
            switch profile.origin(of: key) {
            case .file(let line): origin = "file, line \(line)"
            case .derived(let line): origin = "derived from the machine (line \(line) says 'derived')"
            case .default: origin = key.acceptsDerived ? "default (from the machine)" : "default"
            }
            let name = key.name.padding(toLength: width, withPad: " ", startingAt: 0)
            let value = profile.value(of: key)
            print("  \(name) = \(value.isEmpty ? "(empty)" : value)".padding(toLength: width + 30, withPad: " ", startingAt: 0)
                + "  [\(origin)]")
        }
    }

    private func printIOUring(_ features: IOUringFeatures) {
        print("io_uring")
        if let refusal = features.unavailable {
            print("  unavailable: \(refusal.description)")
            return
        }
        print("  available (IORING_FEAT_* bits 0x\(String(features.featureBits, radix: 16)))")
        for flag in features.setupFlags {
            print("  setup flag \(flag.name): \(flag.supported ? "supported" : "not supported")")
        }
        for operation in features.operations {
            let missing = operation.optional ? "not supported" : "MISSING"
            let state = operation.supported.map { $0 ? "supported" : missing } ?? "unknown (no probe before Linux 5.6)"
            print("  operation \(operation.name)\(operation.optional ? ", optional" : ""): \(state)")
        }
    }

    private func printPlan(_ profile: BoardProfile, machine: MachineFacts) throws {
        let c = profile.configuration
        print("What the runtime creates")
        var total = 1
        for band in profile.bandPlan {
            let cpus = band.cpus.map { "CPUs " + $0.map(String.init).joined(separator: ",") } ?? "any CPU"
            print("  \(band.band) band: \(band.threads) \(band.threads == 1 ? "thread" : "threads"), on \(cpus)")
            total += band.threads
        }
        // The same choice the runtime makes at start (RINGLET_BACKEND, the backend key,
        // a probe of io_uring): which backend, and why.
        let backend: BackendSelection
        do {
            backend = try BackendSelection.predict(for: c)
        } catch {
            throw ValidationError(error.description)
        }
        print("  backend: \(backend)")
        if backend.backend == .ioUring {
            print("  manager: 1 thread (owns the io_uring: \(c.ringEntries) submission / \(c.ringEntries * 4) completion entries)")
        } else {
            let helpers = backend.backend.helperThreads
            print("  manager: 1 thread (owns the epoll set and its timerfd), and \(helpers) I/O helper threads "
                + "for regular-file reads and writes")
            total += helpers
        }
        print("  threads in all: \(total), fixed at start")
        if let placement = profile.placement {
            let highest = (placement.bigCores + placement.smallCores).max() ?? 0
            print(highest < machine.onlineCPUs
                ? "  big.LITTLE placement: on (big cores \(placement.bigCores), small cores \(placement.smallCores))"
                : "  big.LITTLE placement: skipped here (the profile names CPU \(highest); this machine has "
                    + "\(machine.onlineCPUs)); workers run unpinned, with one warning")
        } else {
            print("  big.LITTLE placement: off (every core has the same capacity)")
        }
        let plan = profile.memoryPlan
        print("  pools: \(c.workNodes) work nodes, \(c.ioRequests) I/O requests (\(c.ioQueueDepth) per channel, "
            + "chunks of \(c.ioChunkBytes) bytes)")
        print("  memory: stacks \(plan.threads) × \(plan.stackBytesPerThread) = \(mib(plan.stackBytes)), node pool "
            + "\(mib(plan.workNodeBytes)), I/O buffers \(mib(plan.ioBufferBytes)), sources \(c.sources) × "
            + "\(RuntimeConfiguration.bytesPerSource) = \(mib(plan.sourceBytes))")
        let percent = plan.budgetBytes > 0 ? plan.totalBytes * 100 / plan.budgetBytes : 0
        print("  total \(mib(plan.totalBytes)) of the \(mib(plan.budgetBytes)) budget (\(percent)%)")
    }

    private func mib(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

    /// "6.1.0-18-arm64" against "6.1": compares major, then minor.
    private func kernelAtLeast(_ release: String, _ minimum: String) -> Bool {
        func numbers(_ text: String) -> [Int] {
            text.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        }
        return numbers(release).lexicographicallyPrecedes(numbers(minimum)) == false
    }
}
