import ArgumentParser

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Compare Ringlet with the toolchain's Dispatch.")
    func run() throws {}
}
