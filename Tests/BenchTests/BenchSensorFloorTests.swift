// The floor side of the sensor rows (BenchSupport/BenchSensorFloor.swift): a band's
// thread fires its timers, never before their deadlines, merges the timers whose windows
// overlap into one wake-up, drains its pipe beside another band's thread, and stops at
// once however long it sleeps.
import BenchSupport
import Glibc
import Synchronization
import Testing

@Suite struct BenchSensorFloorTests {
    /// Fire times, from the band's thread; read by the test.
    final class Fires: @unchecked Sendable {
        private let lock = Mutex<[UInt64]>([])
        func record() { lock.withLock { $0.append(benchNow()) } }
        var times: [UInt64] { lock.withLock { $0 } }
    }

    /// Waits up to 5 s for `condition`.
    func waitUntil(_ condition: () -> Bool) -> Bool {
        let deadline = benchNow() + 5_000_000_000
        while !condition() {
            if benchNow() > deadline { return false }
            benchSleep(nanoseconds: 1_000_000)
        }
        return true
    }

    @Test func timersFireNeverEarlyAndOverlappingWindowsShareAWakeup() {
        // 20 ms with 4 ms of leeway, and 40 ms from 42.5 ms with 10 ms: the second's
        // deadlines fall inside every other window of the first, whose wake-up waits for
        // them (to the window's last millisecond, 43-44 ms) instead of coming at 40 ms.
        let often = Fires()
        let seldom = Fires()
        let floor = BenchSensorFloor([BenchFloorBand(timers: [
            (BenchWakeupFloor.Timer(interval: 20_000_000, leeway: 4_000_000, phase: 20_000_000), { often.record() }),
            (BenchWakeupFloor.Timer(interval: 40_000_000, leeway: 10_000_000, phase: 42_500_000), { seldom.record() })])])
        #expect(floor.start() == nil)
        #expect(waitUntil { seldom.times.count >= 4 })
        floor.stop()
        let fast = often.times
        let slow = seldom.times
        #expect(floor.fires[0] == [fast.count, slow.count])
        for (k, time) in fast.enumerated() { #expect(time >= floor.origin + UInt64(k + 1) * 20_000_000) }
        for (k, time) in slow.enumerated() {
            let deadline = floor.origin + 42_500_000 + UInt64(k) * 40_000_000
            #expect(time >= deadline)
            // The first timer's (2k+2)-th fire waited for this deadline and shared its wake-up.
            #expect(2 * k + 1 < fast.count && fast[2 * k + 1] >= deadline && time - fast[2 * k + 1] < 5_000_000)
        }
    }

    @Test func theDeviceBandDrainsItsPipeBesideABandOfTimers() throws {
        // Two bands, two threads: one only reads the pipe, the other only fires its timer.
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0 && fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let ticks = Fires()
        let floor = BenchSensorFloor([
            BenchFloorBand(timers: [(BenchWakeupFloor.Timer(interval: 10_000_000, leeway: 1_000_000, phase: 10_000_000),
                                     { ticks.record() })]),
            BenchFloorBand(timers: [], pipe: ends[0])])
        #expect(floor.start() == nil)
        let bytes = [UInt8](repeating: 0x42, count: 32)
        #expect(bytes.withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) } == 32)
        var waiting: Int32 = 1
        #expect(waitUntil { ioctl(ends[0], UInt(FIONREAD), &waiting) == 0 && waiting == 0 && ticks.times.count >= 3 })
        floor.stop()
        #expect(floor.reads == 1)
        #expect(floor.fires == [[ticks.times.count], []])
    }

    @Test func stopEndsABandAsleepInALongWindow() {
        // A minute-long timer: stop() returns without waiting for it (a hang fails the run).
        let floor = BenchSensorFloor([BenchFloorBand(timers: [
            (BenchWakeupFloor.Timer(interval: 60_000_000_000, leeway: 0, phase: 60_000_000_000), {})])])
        #expect(floor.start() == nil)
        floor.stop()
        #expect(floor.fires == [[0]])
    }
}
