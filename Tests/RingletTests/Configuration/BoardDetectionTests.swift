// Choosing a board: RINGLET_BOARD (a name, a path, or a name in RINGLET_BOARDS_DIR),
// then /proc/device-tree/model, then big.LITTLE sysfs capacities, then generic —
// with detection reading a fake /proc and /sys built in a temporary directory.

import Foundation
import Testing
@testable import Ringlet

/// A temporary folder shaped like /proc/device-tree and /sys/devices/system/cpu.
final class FakeMachine {
    let root: String

    init(model: String?, capacities: [Int]) throws {
        root = NSTemporaryDirectory() + "ringlet-board-\(UUID().uuidString)"
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/device-tree", withIntermediateDirectories: true)
        if let model {
            // The device tree stores the model NUL-terminated.
            try Data(model.utf8 + [0]).write(to: URL(fileURLWithPath: root + "/device-tree/model"))
        }
        for (cpu, capacity) in capacities.enumerated() {
            try fm.createDirectory(atPath: root + "/cpu/cpu\(cpu)", withIntermediateDirectories: true)
            try "\(capacity)\n".write(toFile: root + "/cpu/cpu\(cpu)/cpu_capacity", atomically: true, encoding: .utf8)
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    var facts: MachineFacts {
        MachineFacts.current(paths: MachinePaths(deviceTreeModel: root + "/device-tree/model", cpuDirectory: root + "/cpu"))
    }
}

@Suite struct BoardDetectionTests {
    @Test func readsTheFakeMachine() throws {
        let machine = try FakeMachine(model: "Raspberry Pi 4 Model B Rev 1.4", capacities: [1024, 1024, 1024, 1024])
        let facts = machine.facts
        #expect(facts.deviceTreeModel == "Raspberry Pi 4 Model B Rev 1.4")
        #expect(facts.coreCapacities == [1024, 1024, 1024, 1024])
        #expect(facts.onlineCPUs >= 1 && facts.memoryMegabytes >= 16)
    }

    @Test(arguments: [("Raspberry Pi Zero 2 W Rev 1.0", "raspberry-pi-zero-2w"),
                      ("Raspberry Pi 3 Model B Plus Rev 1.3", "raspberry-pi-3b-plus"),
                      ("Raspberry Pi 4 Model B Rev 1.5", "raspberry-pi-4"),
                      ("Raspberry Pi 5 Model B Rev 1.0", "raspberry-pi-5"),
                      ("Orange Pi 5", "orange-pi-5")])
    func theDeviceTreeModelChoosesTheBoard(_ model: String, _ board: String) throws {
        let machine = try FakeMachine(model: model, capacities: [])
        let selection = try BoardSelection.choose(board: nil, boardsDirectory: nil, machine: machine.facts)
        #expect(selection.profile.board == board)
        #expect(selection.reason.contains("'\(model)'") && selection.reason.contains("built-in \(board)"), "\(selection.reason)")
    }

    @Test func bigLittleCapacitiesChooseTheBoardWithoutAModel() throws {
        let machine = try FakeMachine(model: nil, capacities: [407, 407, 407, 407, 1024, 1024, 1024, 1024])
        let selection = try BoardSelection.choose(board: "", boardsDirectory: nil, machine: machine.facts)
        #expect(selection.profile.board == "orange-pi-5")
        #expect(selection.reason.contains("cpu_capacity 407,407,407,407,1024,1024,1024,1024"), "\(selection.reason)")
    }

    @Test func anUnknownMachineIsGenericAndDerived() throws {
        let machine = try FakeMachine(model: "Some Vendor Board v2", capacities: [1024, 1024])
        let facts = machine.facts
        let selection = try BoardSelection.choose(board: nil, boardsDirectory: nil, machine: facts)
        #expect(selection.profile.board == "generic")
        #expect(selection.profile.configuration
                    == RuntimeConfiguration.derived(cores: facts.onlineCPUs, memoryMegabytes: facts.memoryMegabytes))
        #expect(selection.reason.contains("matches no profile's model") && selection.reason.contains("generic"))
        let bare = try FakeMachine(model: nil, capacities: [])
        let none = try BoardSelection.choose(board: nil, boardsDirectory: nil, machine: bare.facts)
        #expect(none.profile.board == "generic" && none.reason.contains("no /proc/device-tree/model"))
    }

    @Test func ringletBoardNamesAPathOrABoard() throws {
        let facts = MachineFacts(onlineCPUs: 2)
        let named = try BoardSelection.choose(board: "watch-class", boardsDirectory: nil, machine: facts)
        #expect(named.profile.board == "watch-class" && named.profile.file == "built-in watch-class")
        #expect(named.reason.contains("RINGLET_BOARD=watch-class"))

        let path = "\(boardsDirectory)/raspberry-pi-4.profile"
        let byPath = try BoardSelection.choose(board: path, boardsDirectory: nil, machine: facts)
        #expect(byPath.profile.board == "raspberry-pi-4" && byPath.profile.file == path)

        let fromDirectory = try BoardSelection.choose(board: "raspberry-pi-5", boardsDirectory: boardsDirectory, machine: facts)
        #expect(fromDirectory.profile.file == "\(boardsDirectory)/raspberry-pi-5.profile")
        #expect(fromDirectory.reason.contains("RINGLET_BOARDS_DIR"))
    }

    @Test func aBadRingletBoardThrowsTheProfileError() throws {
        let facts = MachineFacts(onlineCPUs: 2)
        #expect(throws: BoardProfileError.self) {
            try BoardSelection.choose(board: "no-such-board", boardsDirectory: nil, machine: facts)
        }
        let file = NSTemporaryDirectory() + "ringlet-bad-\(UUID().uuidString).profile"
        try "cores = 2\nworkNodes = lots\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        do {
            _ = try BoardSelection.choose(board: file, boardsDirectory: nil, machine: facts)
            Issue.record("a bad profile was accepted")
        } catch {
            #expect(error.description == "\(file):2: key 'workNodes': expects an integer (got 'lots')")
        }
    }
}
