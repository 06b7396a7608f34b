// What `ringlet bench-energy` reads and draws (BenchSupport/BenchEnergyLogger.swift,
// BenchEnergyChart.swift): the CPU idle-state reader against a sysfs tree of its own
// (this machine has no cpuidle driver), the lateness summary, and the chart's bars.
import BenchSupport
import Glibc
import Testing

@Suite struct BenchEnergyLoggerTests {
    func tree(_ files: [String: String]) -> String { fakeSysfsTree("cpuidle", files) }

    @Test func idleResidencyCountsEveryCPUsStatesButPoll() {
        let root = tree(["cpu0/cpuidle/state0/name": "POLL\n", "cpu0/cpuidle/state0/time": "100\n",
                         "cpu0/cpuidle/state1/name": "C1\n", "cpu0/cpuidle/state1/time": "1000\n",
                         "cpu1/cpuidle/state0/name": "POLL\n", "cpu1/cpuidle/state0/time": "50\n",
                         "cpu1/cpuidle/state1/name": "C1\n", "cpu1/cpuidle/state1/time": "2000\n",
                         "cpufreq/policy0/scaling_cur_freq": "1000\n"])
        defer { removeFakeSysfsTree(root) }
        let idle = BenchIdleResidency(root: root)
        #expect(idle.states.map(\.name) == ["POLL", "C1", "POLL", "C1"])
        let before = idle.read()
        #expect(before == [100, 1000, 50, 2000])
        // 1 s later: cpu0 spent 600 ms in C1 (and 300 ms polling), cpu1 200 ms in C1.
        let after: [UInt64] = [300_100, 601_000, 50, 202_000]
        let share = idle.idleShare(before ?? [], after, windowMicroseconds: 1_000_000, cpus: 2)
        #expect(abs(share - 0.4) < 1e-9)
    }

    @Test func noCpuidleDriverOrAnUnreadableStateGiveNoReading() {
        let empty = tree(["cpu0/topology/core_id": "0\n"])
        defer { removeFakeSysfsTree(empty) }
        #expect(BenchIdleResidency(root: empty).read() == nil)
        let broken = tree(["cpu0/cpuidle/state0/name": "C1\n"])
        defer { removeFakeSysfsTree(broken) }
        #expect(BenchIdleResidency(root: broken).read() == nil)
        #expect(BenchIdleResidency(root: "/nonexistent").read() == nil)
    }

    @Test func latenessSummaryGivesPercentilesTheFiresBeyondTheBoundAndTheEarlyOnes() {
        let lateness = BenchLateness(sensors: 2)
        for late in 1...100 { lateness.record(sensor: 0, deadline: 1_000, now: 1_000 + UInt64(late) * 10) }
        lateness.record(sensor: 1, deadline: 5_000, now: 4_000)
        let figures = Dictionary(lateness.summary { $0 == 0 ? 900 : 0 }, uniquingKeysWith: { a, _ in a })
        #expect(figures["late_p50_ns"] == 510)
        #expect(figures["late_p99_ns"] == 1000)
        #expect(figures["late_beyond_bound"] == 10)
        #expect(figures["early"] == 1)
        #expect(figures["fires"] == 101)
    }

    @Test func theLoggerIsEightSensorsAt100And10And1Hertz() {
        #expect(BenchEnergyLogger.hertz.sorted() == [1, 1, 1, 10, 10, 10, 100, 100])
        #expect(BenchEnergyLogger.latenessBound(0) == 2_000_000)
        #expect(BenchEnergyLogger.Side.allCases.count == 4)
    }

    @Test func theChartHasABarPerSideInEachOfItsThreePanels() {
        let sides = [BenchEnergyChart.Side(title: "Ringlet, leeway 10 %", figures: (100, 20, 1)),
                     BenchEnergyChart.Side(title: "Dispatch <&>", figures: (400, 30, 2)),
                     BenchEnergyChart.Side(title: "threads", figures: (230, 10, 0.5)),
                     BenchEnergyChart.Side(title: "Ringlet, leeway 0", figures: nil)]
        let svg = BenchEnergyChart(sides: sides, seconds: 60).svg()
        #expect(svg.split(separator: "\n").filter { $0.hasPrefix("<rect") }.count == 3 * 4 + 4)
        #expect(svg.contains("Dispatch &lt;&amp;&gt;"))
        #expect(svg.contains("Ringlet, leeway 0 (failed)"))
        #expect(svg.contains("wake-ups per second") && svg.contains("p99 lateness, ms"))
        #expect(svg.contains(">400<"), "the largest bar carries its value")
    }
}
