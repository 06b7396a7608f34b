extension DispatchSource {
    /// Memory-pressure levels, GCD's values; a source's `data` is the levels reached
    /// since its handler last ran (OR-merged), its `mask` the levels it delivers.
    public struct MemoryPressureEvent: OptionSet, Sendable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// The pressure has fallen back below `.warning`.
        public static let normal = MemoryPressureEvent(rawValue: 0x1)
        /// Some task stalled on memory for `memoryWarningSomePercent` of the window.
        public static let warning = MemoryPressureEvent(rawValue: 0x2)
        /// Every non-idle task stalled at once for `memoryCriticalFullPercent` of it.
        public static let critical = MemoryPressureEvent(rawValue: 0x4)
        public static let all: MemoryPressureEvent = [.normal, .warning, .critical]
    }

    /// A source for the system's memory pressure, from Linux's pressure-stall
    /// information (the process's cgroup's `memory.pressure` where it has one, else
    /// `/proc/pressure/memory`): PSI triggers polled by the manager, and a coalescing
    /// timer that looks for the fall back to `.normal` while a level is raised
    /// (MemoryPressureWatch). Where the kernel refuses a trigger (before Linux 6.5
    /// without CAP_SYS_RESOURCE) the file is read on a coalescing timer instead, said in
    /// one line; where the kernel has no PSI the source is cancelled on activation, with
    /// a message naming the cause. The thresholds and rates are board-profile keys
    /// (`memoryWarningSomePercent` and the other `memoryPressure…` keys).
    public class func makeMemoryPressureSource(eventMask: MemoryPressureEvent,
                                               queue: DispatchQueue? = nil) -> DispatchSourceMemoryPressure {
        DispatchSource(kind: .memoryPressure(eventMask), queue: queue).usingKernelSources()
    }
}

/// Memory pressure: `.normal`, `.warning`, `.critical`.
public protocol DispatchSourceMemoryPressure: DispatchSourceProtocol {}

extension DispatchSourceMemoryPressure {
    @_alwaysEmitIntoClient
    public var data: DispatchSource.MemoryPressureEvent {
        DispatchSource.MemoryPressureEvent(rawValue: (self as DispatchSourceProtocol).data)
    }
    @_alwaysEmitIntoClient
    public var mask: DispatchSource.MemoryPressureEvent {
        DispatchSource.MemoryPressureEvent(rawValue: (self as DispatchSourceProtocol).mask)
    }
}
