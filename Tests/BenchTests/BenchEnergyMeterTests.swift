// The RAPL reader behind the energy row of `ringlet bench`: it finds the package domains
// under either name the kernel gives them (intel-rapl:N, amd-rapl:N) and no subdomain or
// MMIO copy, and gives no reading — "not available here" — when a package's energy_uj
// cannot be read.
import BenchSupport
import Glibc
import Testing

@Suite struct BenchEnergyMeterTests {
    func powercap(_ files: [String: String]) -> String { fakeSysfsTree("powercap", files) }

    func remove(_ root: String) { removeFakeSysfsTree(root) }

    @Test func findsIntelAndAMDPackagesButNoSubdomains() {
        let root = powercap(["intel-rapl:0/energy_uj": "1000\n", "amd-rapl:1/energy_uj": "2000\n",
                             "intel-rapl:0:0/energy_uj": "5\n", "intel-rapl-mmio:0/energy_uj": "7\n"])
        defer { remove(root) }
        let meter = BenchEnergyMeter(root: root)
        #expect(meter.packages == [root + "/amd-rapl:1", root + "/intel-rapl:0"])
        #expect(meter.read() == [2000, 1000])
    }

    @Test func noPackagesOrAnUnreadableCounterGiveNoReading() {
        let empty = powercap([:])
        defer { remove(empty) }
        #expect(BenchEnergyMeter(root: empty).read() == nil)
        #expect(BenchEnergyMeter(root: empty + "/missing").packages.isEmpty)

        // A counter that can't be read (since Linux 5.10 only root reads them; a test run
        // as root reads any file, so here energy_uj is a directory).
        let root = powercap(["amd-rapl:0/energy_uj/x": "", "intel-rapl:1/energy_uj": "42\n"])
        defer { remove(root) }
        let meter = BenchEnergyMeter(root: root)
        #expect(meter.packages.count == 2)
        #expect(meter.read() == nil, "one unreadable package: no reading at all")
    }
}
