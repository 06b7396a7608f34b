/// What the runtime reads about the machine it runs on, for detection and for the
/// profile keys that are `derived` or left out: CPUs, their capacities, RAM, page
/// size, the device-tree model. Tests build one by hand or point `MachinePaths` at a
/// fake /proc and /sys.
public struct MachineFacts: Sendable {
    /// Online CPUs (sysconf).
    public var onlineCPUs: Int
    /// /sys/devices/system/cpu/cpuN/cpu_capacity for N = 0, 1, ... until one is
    /// missing; empty when the kernel does not report capacities.
    public var coreCapacities: [Int]
    /// Physical memory in MiB.
    public var memoryMegabytes: Int
    /// The kernel's page size.
    public var pageBytes: Int
    /// /proc/device-tree/model without its trailing NUL ("" when absent: x86, or no device tree).
    public var deviceTreeModel: String

    public init(onlineCPUs: Int, coreCapacities: [Int] = [], memoryMegabytes: Int = 1024, pageBytes: Int = 4096,
                deviceTreeModel: String = "") {
        self.onlineCPUs = onlineCPUs
        self.coreCapacities = coreCapacities
        self.memoryMegabytes = memoryMegabytes
        self.pageBytes = pageBytes
        self.deviceTreeModel = deviceTreeModel
    }

    /// Reads this machine. `paths` redirects the device-tree and sysfs reads.
    public static func current(paths: MachinePaths = .system) -> MachineFacts {
        var capacities: [Int] = []
        // 4096 is the kernel's NR_CPUS ceiling on arm64; the loop ends at the first gap.
        for cpu in 0..<4096 {
            guard let bytes = try? MachineFiles.read(path: "\(paths.cpuDirectory)/cpu\(cpu)/cpu_capacity", limit: 64),
                  let capacity = decimal(bytes) else { break }
            capacities.append(capacity)
        }
        var model: [UInt8] = (try? MachineFiles.read(path: paths.deviceTreeModel, limit: 1024)) ?? []
        // The device tree stores the model NUL-terminated; some firmware adds a newline.
        while let last = model.last, last == 0 || last == 10 || last == 32 { model.removeLast() }
        return MachineFacts(onlineCPUs: max(1, ThreadControl.onlineCPUs), coreCapacities: capacities,
                            memoryMegabytes: currentMemoryMegabytes,
                            pageBytes: MachineFiles.pageBytes, deviceTreeModel: String(decoding: model, as: UTF8.self))
    }

    /// This machine's RAM in MiB (1024 when sysconf cannot tell).
    static var currentMemoryMegabytes: Int { max(16, MachineFiles.memoryMegabytes ?? 1024) }

    /// A sysfs number: digits, then optionally a newline.
    private static func decimal(_ bytes: [UInt8]) -> Int? {
        var value = 0
        var digits = 0
        for byte in bytes {
            if byte == 10 { break }
            guard byte >= 48 && byte <= 57, digits < 9 else { return nil }
            value = value * 10 + Int(byte - 48)
            digits += 1
        }
        return digits == 0 ? nil : value
    }

    /// The triple of the machine this runtime was built for: `crossTarget`'s default.
    static var hostTarget: String {
        #if arch(x86_64)
        return "x86_64-unknown-linux-gnu"
        #elseif arch(arm64)
        return "aarch64-unknown-linux-gnu"
        #else
        return "unknown-linux-gnu"
        #endif
    }
}

/// Where `MachineFacts.current` reads the device-tree model and CPU capacities.
public struct MachinePaths: Sendable {
    /// Normally /proc/device-tree/model.
    public var deviceTreeModel: String
    /// Normally /sys/devices/system/cpu (holding cpuN/cpu_capacity).
    public var cpuDirectory: String

    public init(deviceTreeModel: String, cpuDirectory: String) {
        self.deviceTreeModel = deviceTreeModel
        self.cpuDirectory = cpuDirectory
    }

    public static let system = MachinePaths(deviceTreeModel: "/proc/device-tree/model",
                                            cpuDirectory: "/sys/devices/system/cpu")
}
