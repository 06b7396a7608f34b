import Ringlet

// Board profiles in the checks program, so that the parser is exercised in Embedded
// Swift and on the boards themselves (`make cross`/`make sim`): every built-in profile
// parses, errors name the line and key, and this machine's choice loads.

/// Byte comparison: String == would need Unicode tables in Embedded builds.
private func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }

/// Adds the board-profile checks to `harness`.
func runBoardChecks(_ harness: CheckHarness) {
    let machine = MachineFacts(onlineCPUs: 4, memoryMegabytes: 2048)

    harness.run("every built-in board profile parses and fits its memory budget") {
        for name in BoardProfile.builtInNames {
            do throws(BoardProfileError) {
                let profile = try BoardProfile.named(name, machine: machine)
                if !same(profile.board, name) { return "\(name) calls itself \(profile.board)" }
                if !profile.memoryPlan.fitsBudget { return "\(name) exceeds its memory budget" }
            } catch {
                return "\(name): \(error.description)"
            }
        }
        return nil
    }

    harness.run("profile errors name the line and the key") {
        let text = "# a board\ncores = 2\nworkerPerCore = 2\n"
        do throws(BoardProfileError) {
            _ = try BoardProfile.parse(text, file: "checks.profile", machine: machine)
            return "a misspelt key was accepted"
        } catch {
            let expected = "checks.profile:3: key 'workerPerCore': unknown key; did you mean 'workersPerCore'?"
            return error.kind == .unknownKey && same(error.description, expected) ? nil : "got: \(error.description)"
        }
    }

    harness.run("the board chosen for this machine loads") {
        do throws(BoardProfileError) {
            let selection = try BoardSelection.fromEnvironment()
            print("     board: \(selection.profile.board) (\(selection.reason))")
            return nil
        } catch {
            return error.description
        }
    }
}
