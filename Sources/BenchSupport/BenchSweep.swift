// The sweeps of `ringlet bench --scale`: one workload run at growing loads, to show how
// each runtime's cost per unit grows with the load (flat is the aim).

/// One sweep; the raw value names it on the command line (`--sweep-child`).
package enum BenchSweep: String, CaseIterable {
    /// Repeating timers (100 ms, 20 ms leeway) on one serial queue: CPU time and
    /// context switches per fire.
    case timers
    /// Read sources on pipes, a byte each per round: wall time per event.
    case sources
    /// 100,000 items spread over N serial queues, held inactive then run: bytes and
    /// wall time per item (queues included).
    case queues
    /// 200,000 empty items from N producer threads onto one serial queue: ns per item.
    case producers

    /// The loads swept, smallest first.
    package var loads: [Int] {
        switch self {
        case .timers: return [100, 1_000, 10_000]
        case .sources: return [10, 1_000, 10_000]
        case .queues: return [10, 10_000, 100_000]
        case .producers: return [1, 4, 16, 64]
        }
    }

    /// What a load counts, for the table and the chart's x axis.
    package var loadName: String {
        switch self {
        case .timers: return "timers"
        case .sources: return "read sources"
        case .queues: return "queues"
        case .producers: return "producers"
        }
    }

    /// The figures a point reports that the table shows: key, unit, and how to show it.
    package var figures: [(key: String, title: String)] {
        switch self {
        case .timers: return [("cpu_ns_per_fire", "CPU µs per fire"), ("switches_per_fire", "context switches per fire")]
        case .sources: return [("ns_per_event", "µs per event")]
        case .queues: return [("ns_per_item", "ns per item"), ("bytes_per_item", "bytes per item")]
        case .producers: return [("ns", "ns per item")]
        }
    }

    /// Divides a raw figure for display (ns → µs where the title says µs).
    package func displayDivisor(_ key: String) -> Double {
        key == "cpu_ns_per_fire" || key == "ns_per_event" ? 1000 : 1
    }

    /// The most a point may take, in seconds, before the child is killed and reported.
    package var timeoutSeconds: Int { self == .timers ? 60 : 120 }
}
