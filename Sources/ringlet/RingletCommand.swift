import ArgumentParser

/// `ringlet`: the command-line tool. `demo` runs a short workload on the runtime;
/// `bench` compares Ringlet with the toolchain's Dispatch in the same process; `board` shows
/// the board profile in force and what the runtime creates from it; `soak` is the
/// reliability run (every item exactly once under load, memory and threads bounded); `dump`
/// prints the live dump of a running Ringlet program; `trace` draws a trace file as an SVG timeline.
@main
struct RingletCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ringlet",
        abstract: "Ringlet: a fixed-size, cooperative dispatch runtime for small Linux boards.",
        subcommands: [Demo.self, Bench.self, BenchEnergyCommand.self, BoardCommand.self, Soak.self, DumpCommand.self, TraceCommand.self],
        defaultSubcommand: Demo.self)
}
