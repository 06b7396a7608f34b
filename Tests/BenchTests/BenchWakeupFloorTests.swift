// The wake-up floor the sensor rows print (BenchSupport/BenchSensor.swift): timers whose
// windows overlap count once, whatever their QoS; disjoint ones count each.
import BenchSupport
import Testing

@Suite struct BenchWakeupFloorTests {
    @Test func overlappingWindowsCountOnce() {
        // 50 Hz with 2 ms leeway and 10 Hz with 10 ms: each 10 Hz deadline falls inside a
        // 50 Hz window (100 ms in [100, 102] ms), so the windows ending by 1.01 s are 50.
        let timers = [BenchWakeupFloor.Timer(interval: 20_000_000, leeway: 2_000_000, phase: 20_000_000),
                      BenchWakeupFloor.Timer(interval: 100_000_000, leeway: 10_000_000, phase: 100_000_000)]
        #expect(BenchWakeupFloor.windows(timers, nanoseconds: 1_010_000_000) == 50)
    }

    @Test func disjointWindowsCountEach() {
        let timers = [BenchWakeupFloor.Timer(interval: 100_000_000, leeway: 0, phase: 100_000_000),
                      BenchWakeupFloor.Timer(interval: 100_000_000, leeway: 0, phase: 150_000_000)]
        #expect(BenchWakeupFloor.windows(timers, nanoseconds: 1_000_000_000) == 19)
    }

    @Test func theSensorFloorIsItsFiftyWindowsItsPipeAndItsDevice() {
        // 50 windows a second (the last of a minute ends after it), 10 reads, 10 writes.
        #expect(abs(BenchWakeupFloor.sensor - 70) < 0.05)
    }
}
