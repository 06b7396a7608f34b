// The runtime's first-use start reaches board selection through the C side
// (Sources/CRinglet/ringlet_first_use.c), so that a program linked for an explicit
// start can leave selection out; SwiftPM builds always link it in.

import Testing
@testable import Ringlet

@Suite struct FirstUseBoardTests {
    @Test func selectionIsLinkedInAndChoosesWhatTheEnvironmentSays() throws {
        guard case .chosen(let profile) = FirstUseBoard.choose() else {
            Issue.record("rl_first_use_board says board selection is not linked into the test binary")
            return
        }
        let expected = try BoardSelection.fromEnvironment().profile
        #expect(profile?.board == expected.board)
        #expect(Runtime.profileForFirstUse(.chosen(profile))?.board == expected.board)
    }

    @Test func aProgramLinkedWithoutSelectionStartsDerivedAndSaysWhy() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            if Runtime.profileForFirstUse(.notLinked) != nil { Runtime.exit(status: 1) }
        }
        let text = result?.standardErrorText ?? ""
        #expect(text.contains("the runtime was used before Runtime.start, in a program linked without board selection"),
                "\(text)")
        #expect(text.contains("starting with RuntimeConfiguration.derived()"), "\(text)")
    }
}
