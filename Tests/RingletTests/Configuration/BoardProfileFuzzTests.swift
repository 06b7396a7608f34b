// Fuzzing the profile parser: thousands of mutated shipped profiles and random
// texts must each give a `BoardProfileError` that points into the file, or a profile
// whose configuration validates — never a trap. Deterministic: a fixed seed and a
// generator written here (SplitMix64), so a failure reproduces with its iteration.

import Testing
@testable import Ringlet

/// SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number generators",
/// OOPSLA 2014): tiny, and the same sequence on every platform.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Ways to damage a profile, each a plausible editing mistake or hostile input.
enum ProfileMutation: CaseIterable {
    case deleteLine, duplicateLine, swapLines, flipByte, hugeNumber, negativeNumber, nonASCII, emptyValue
    case veryLongLine, randomBytes, dropEquals, randomKey

    func apply(to lines: inout [[UInt8]], using random: inout SplitMix64) {
        guard !lines.isEmpty else { return }
        let index = Int.random(in: 0..<lines.count, using: &random)
        func replaceValue(_ value: String) {
            if let equals = lines[index].firstIndex(of: 61) { lines[index] = Array(lines[index][...equals]) + Array(" \(value)".utf8) }
        }
        switch self {
        case .deleteLine: lines.remove(at: index)
        case .duplicateLine: lines.insert(lines[index], at: Int.random(in: 0...lines.count, using: &random))
        case .swapLines: lines.swapAt(index, Int.random(in: 0..<lines.count, using: &random))
        case .flipByte:
            if !lines[index].isEmpty {
                let at = Int.random(in: 0..<lines[index].count, using: &random)
                lines[index][at] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            }
        case .hugeNumber: replaceValue(["99999999999999999999", "9223372036854775807", "1_000_000_000_000"]
            .randomElement(using: &random)!)
        case .negativeNumber: replaceValue("-\(Int.random(in: 0...100_000, using: &random))")
        case .nonASCII: replaceValue(["é", "日本", "1024,１０２４", "\u{FEFF}4", "🙂"].randomElement(using: &random)!)
        case .emptyValue: replaceValue("")
        case .veryLongLine:
            lines[index] += [UInt8](repeating: UInt8.random(in: 48...57, using: &random),
                                    count: Int.random(in: 1_000...20_000, using: &random))
        case .randomBytes:
            lines[index] = (0..<Int.random(in: 0...80, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        case .dropEquals: lines[index].removeAll { $0 == 61 }
        case .randomKey:
            let key = BoardProfileKey.allCases.randomElement(using: &random)!
            lines.insert(Array("\(key.name) = \(Int.random(in: -2...70_000, using: &random))".utf8), at: index)
        }
    }
}

@Suite struct BoardProfileFuzzTests {
    /// Parses `bytes`; checks that an error points into the file and that a profile holds together.
    private func check(_ bytes: [UInt8], lineCount: Int, _ what: String) {
        var parser = BoardProfileParser(bytes: bytes, file: "fuzz.profile", machine: testMachine)
        do {
            let profile = try parser.parse()
            #expect((try? profile.configuration.validate()) != nil, "\(what): accepted an invalid configuration")
            #expect(profile.coreCapacities.count == profile.configuration.cores, "\(what)")
            #expect(profile.memoryPlan.fitsBudget && profile.memoryBudgetBytes <= profile.memoryMegabytes << 20, "\(what)")
        } catch {
            #expect(error.file == "fuzz.profile", "\(what)")
            #expect(error.line >= 0 && error.line <= lineCount, "\(what): line \(error.line) of \(lineCount): \(error)")
            #expect(!error.description.isEmpty)
        }
    }

    @Test func mutatedShippedProfilesNeverCrash() {
        var random = SplitMix64(state: 0x5EED_B0A4D)
        var rejected = 0
        let profiles = BuiltInBoards.all.map { board in board.text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { Array($0.utf8) } }
        for iteration in 0..<3000 {
            var lines = profiles[iteration % profiles.count]
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                ProfileMutation.allCases.randomElement(using: &random)!.apply(to: &lines, using: &random)
            }
            let bytes = Array(lines.joined(separator: [10]))
            var parser = BoardProfileParser(bytes: bytes, file: "fuzz.profile", machine: testMachine)
            if (try? parser.parse()) == nil { rejected += 1 }
            check(bytes, lineCount: lines.count, "iteration \(iteration)")
        }
        // Most mutations break something; some (a swapped or deleted line) do not.
        #expect(rejected > 1000 && rejected < 3000, "rejected \(rejected) of 3000")
    }

    @Test func randomTextsNeverCrash() {
        var random = SplitMix64(state: 42)
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 =,#-_.\t\n\r".utf8)
        for iteration in 0..<1000 {
            let length = Int.random(in: 0...400, using: &random)
            let bytes: [UInt8] = (0..<length).map { _ in
                iteration % 2 == 0 ? alphabet.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
            }
            check(bytes, lineCount: bytes.filter { $0 == 10 }.count + 1, "random text \(iteration)")
            // The String path (what `BoardProfile.parse` takes) repairs invalid UTF-8 first.
            _ = try? BoardProfile.parse(String(decoding: bytes, as: UTF8.self), file: "fuzz.profile", machine: testMachine)
        }
    }

    @Test func validKeyValueSoupGivesAnErrorOrAValidProfile() {
        var random = SplitMix64(state: 7)
        var accepted = 0
        for iteration in 0..<1000 {
            var lines: [String] = []
            for key in BoardProfileKey.allCases.shuffled(using: &random).prefix(Int.random(in: 0...6, using: &random)) {
                let value: String
                switch key.kind {
                case .integer: value = "\(Int.random(in: -10...(1 << Int.random(in: 1...40, using: &random)), using: &random))"
                case .boolean: value = Bool.random(using: &random) ? "true" : "false"
                case .integerList: value = (0..<Int.random(in: 1...8, using: &random)).map { _ in "\(Int.random(in: 0...1100, using: &random))" }.joined(separator: ",")
                case .text: value = ["6.1", "512M", "virt", "x y", ""].randomElement(using: &random)!
                }
                lines.append("\(key.name) = \(value)")
            }
            let bytes = Array(lines.joined(separator: "\n").utf8)
            var parser = BoardProfileParser(bytes: bytes, file: "fuzz.profile", machine: testMachine)
            if (try? parser.parse()) != nil { accepted += 1 }
            check(bytes, lineCount: lines.count, "soup \(iteration): \(lines)")
        }
        #expect(accepted > 0, "no random profile was valid: the generator is too hostile to test acceptance")
    }
}
