import ArgumentParser

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run a short workload and print what happened.")
    func run() throws {}
}
