// The key table (`BoardProfileKey.spec`) drives parsing, the range checks and
// `ringlet board`; Boards/README.md's two key tables are held to it here: one row per
// key, in the table of its kind (board or runtime), with the type and range the row of
// `spec` gives. A key added to the code without its line in the README, a range
// changed on one side only, or a row for a key that no longer exists fails.

import Foundation
import Testing
@testable import Ringlet

@Suite struct BoardProfileKeyTableTests {
    /// The rows of the README table under `heading`: key name -> "type, range" column.
    static func readmeRows(under heading: String) throws -> [(key: String, type: String)] {
        let text = try String(contentsOfFile: boardsDirectory + "/README.md", encoding: .utf8)
        var rows: [(String, String)] = []
        var inSection = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { inSection = line == "## \(heading)"; continue }
            guard inSection, line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2 else { continue }
            rows.append((cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")), cells[1]))
        }
        return rows
    }

    @Test func everyKeyHasOneRowInTheTableOfItsKind() throws {
        let board = try Self.readmeRows(under: "Board keys")
        let runtime = try Self.readmeRows(under: "Runtime keys")
        #expect(board.count >= 12 && runtime.count >= 30, "the README's key tables were not found")
        for key in BoardProfileKey.allCases {
            let mine = (key.isRuntimeKey ? runtime : board).filter { $0.key == key.name }
            let other = (key.isRuntimeKey ? board : runtime).filter { $0.key == key.name }
            #expect(mine.count == 1 && other.isEmpty,
                    "Boards/README.md: key '\(key.name)' needs one row in '\(key.isRuntimeKey ? "Runtime" : "Board") keys'")
        }
        for row in board + runtime {
            #expect(BoardProfileKey.named(row.key) != nil, "Boards/README.md lists '\(row.key)', which is no key")
        }
    }

    @Test func everyRowGivesTheTypeAndRangeOfTheCode() throws {
        let rows = try Self.readmeRows(under: "Board keys") + Self.readmeRows(under: "Runtime keys")
        for key in BoardProfileKey.allCases {
            guard let row = rows.first(where: { $0.key == key.name }) else { continue }
            switch key.kind {
            case .integer:
                #expect(row.type.hasPrefix("integer"), "'\(key.name)': README says '\(row.type)'")
                if let range = key.range {
                    #expect(row.type.contains("\(range.lowerBound)...\(range.upperBound)"),
                            "'\(key.name)': the code's range is \(range.lowerBound)...\(range.upperBound), README says '\(row.type)'")
                }
            case .boolean:
                #expect(row.type == "boolean", "'\(key.name)': README says '\(row.type)'")
            case .integerList:
                #expect(row.type.hasPrefix("list"), "'\(key.name)': README says '\(row.type)'")
            case .text:
                #expect(!row.type.hasPrefix("integer") && row.type != "boolean", "'\(key.name)': README says '\(row.type)'")
            }
        }
    }

    /// Each row's value has its place: a stored integer, flag or text in the switch of
    /// the row's shape, and a special key in none (the parser's and `value(of:)`'s own).
    @Test func everyRowsValueHasItsPlace() throws {
        var profile = try BoardProfile.parse("", file: "t.profile", machine: testMachine)
        for key in BoardProfileKey.allCases {
            let integer = profile.configuration.withInteger(key) { $0 } ?? profile.withInteger(key) { $0 }
            let flag = profile.configuration.withFlag(key) { $0 }
            let text = profile.withText(key) { $0 }
            let found = [integer != nil, flag != nil, text != nil].filter { $0 }.count
            switch (key.kind, key.spec.place) {
            case (.integer, .runtime), (.integer, .board):
                #expect(integer != nil && found == 1, "'\(key.name)': its row says integer")
            case (.boolean, .runtime):
                #expect(flag != nil && found == 1, "'\(key.name)': its row says flag")
            case (.text, .board):
                #expect(text != nil && found == 1, "'\(key.name)': its row says text")
            case (_, .special):
                #expect(found == 0, "'\(key.name)' is special but has a stored place too")
            default:
                Issue.record("'\(key.name)': a row of kind \(key.kind) cannot live in \(key.spec.place)")
            }
        }
    }

    /// The range check reads the table: each end of a key's range is taken, one past
    /// it refused naming the key, the range and the profile's line.
    @Test(arguments: BoardProfileKey.allCases.filter { $0.isRuntimeKey && $0.range != nil })
    func theRangeCheckIsTheRow(key: BoardProfileKey) throws {
        let range = try #require(key.range)

        for good in [range.lowerBound, range.upperBound] {
            // A configuration whose rules between keys hold at either end of any range.
            var configuration = RuntimeConfiguration(cores: 4, workersPerCore: 4, lowQoSWorkers: 1, ioChunkBytes: 4096)
            #expect(configuration.withInteger(key) { $0 = good } != nil, "'\(key.name)' has no stored integer")
            #expect(throws: Never.self, "'\(key.name) = \(good)'") { try configuration.validate() }
        }
        do {
            _ = try BoardProfile.parse("# line 1\n\(key.name) = \(range.upperBound + 1)\n", file: "t.profile",
                                       machine: testMachine)
            Issue.record("'\(key.name) = \(range.upperBound + 1)' was taken")
        } catch {
            #expect(error.key == key.name && error.kind == .outOfRange && error.line == 2, "\(error)")
            #expect(error.description.contains("\(range.lowerBound)...\(range.upperBound)"), "\(error)")
        }
    }
}
