// swift-tools-version: 6.1
// Ringlet: a fixed-size, cooperative dispatch runtime for small Linux boards.
import PackageDescription

let package = Package(
    name: "Ringlet",
    products: [
        .library(name: "Ringlet", targets: ["Ringlet"]),
        // For files that import Foundation too: `import RingletFoundationCompat` instead
        // of `import Ringlet` (the PortingFromDispatch article, "Foundation in the same file").
        .library(name: "RingletFoundationCompat", targets: ["RingletFoundationCompat"]),
        // Services across processes: sessions over Unix SOCK_SEQPACKET sockets on the
        // ring, QoS that crosses the process edge, importance boosting (the Services
        // article). Beside the runtime, which stays standard-library-only.
        .library(name: "RingletService", targets: ["RingletService"]),
        // Codable messages for it (JSON through FoundationEssentials), a target of its own
        // so that a service of bytes does not link Foundation.
        .library(name: "RingletServiceCodable", targets: ["RingletServiceCodable"]),
        // SwiftNIO on Ringlet's threads and ring: event loops that are Ringlet serial
        // queues, TCP channels whose accepts, reads and writes are requests of the
        // runtime's socket layer (the Servers article). Behind the `NIO` trait: a package
        // that depends only on `Ringlet` does not resolve swift-nio (SwiftPM resolves a
        // dependency a product uses, used or not, unless a disabled trait guards it);
        // one that uses this product asks for it: `.package(url: ..., traits: ["NIO"])`.
        // `make` builds with the trait on (`make package-check` holds both sides).
        .library(name: "RingletNIO", targets: ["RingletNIO"]),
        // A Hummingbird 2 router served over RingletNIO's channels (`RingletHTTPServer`),
        // behind the `Hummingbird` trait (which turns on `NIO` too).
        .library(name: "RingletHummingbird", targets: ["RingletHummingbird"]),
        // No executable product: the tools (the `ringlet` command, the benchmarks, the
        // checks, the probes) are this package's own, built here by `make` (SwiftPM gives
        // a root package's executable targets products of their own). A package that
        // depends on the `Ringlet` product therefore resolves none of the packages below,
        // which only the tools use (`make package-check` holds that).
    ],
    traits: [
        .trait(name: "NIO", description: "The RingletNIO product: SwiftNIO's event loops and channels on Ringlet"),
        .trait(name: "Hummingbird", description: "The RingletHummingbird product, the hello example and make bench-http",
               enabledTraits: ["NIO"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `make docs`: the DocC catalog Sources/Ringlet/Ringlet.docc.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    // Language modes: the runtime, its checks, the demo and the tests build in Swift 6
    // mode (strict concurrency checking). The command-line tool and the benchmark
    // targets stay in Swift 5 mode: they are measurement code that hands raw pointers
    // and Glibc's `stderr` between threads on purpose, and would need an unchecked
    // wrapper at every such spot without checking anything about Ringlet.
    targets: [
        // liburing through pkg-config; `make deps` installs liburing-dev when missing.
        .systemLibrary(
            name: "CLibURing",
            pkgConfig: "liburing",
            providers: [.apt(["liburing-dev"])]
        ),
        // The only code that includes Linux and liburing headers.
        .target(
            name: "CRinglet",
            dependencies: ["CLibURing"],
            cSettings: [.define("_GNU_SOURCE")],
            linkerSettings: [.linkedLibrary("pthread")]
        ),
        // What the tests and the checks program use to set up pipes, processes and
        // signals; the runtime never links it.
        .target(name: "CRingletTestSupport", cSettings: [.define("_GNU_SOURCE")]),
        // The runtime: standard library, Synchronization and CRinglet only, so it
        // also builds in Embedded Swift mode (`make embedded`).
        //
        // The toolchain's blocks runtime is linked for the programs, not for the runtime
        // (which never calls it): GCD code that converts closures to and from
        // `@convention(block)` makes the compiler call `_Block_copy` and `_Block_release`,
        // which `import Dispatch` used to link. Every Swift program on Linux loads
        // libBlocksRuntime already (libswift_Concurrency -> libdispatch -> it), so this
        // adds no library at run time; Embedded Swift has no blocks.
        .target(
            name: "Ringlet",
            dependencies: ["CRinglet"],
            swiftSettings: [.swiftLanguageMode(.v6)],
            linkerSettings: [.linkedLibrary("BlocksRuntime")]
        ),
        // Ringlet re-exported with every name it shares with the toolchain's Dispatch
        // also re-exported scoped, so those names mean Ringlet's in a file that imports
        // Foundation (which re-exports Dispatch); and the bridge that runs Ringlet's main
        // queue inside Foundation's main run loop (RunLoopBridge.swift).
        .target(
            name: "RingletFoundationCompat",
            dependencies: ["Ringlet"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Sessions and listeners between processes (Sources/RingletService): the runtime's
        // socket layer (`@_spi(RingletNet)`) and Glibc for the credential checks.
        .target(
            name: "RingletService",
            dependencies: ["Ringlet"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .target(
            name: "RingletServiceCodable",
            dependencies: ["RingletService", "Ringlet"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // SwiftNIO's EventLoop and Channel over the runtime's socket layer
        // (`@_spi(RingletNet)`); NIOCore only, so no NIOPosix thread or epoll loop.
        .target(
            name: "RingletNIO",
            dependencies: ["Ringlet", .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"]))],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Hummingbird's HTTP/1 child channel accepted by RingletNIO's bootstrap.
        .target(
            name: "RingletHummingbird",
            dependencies: [
                "RingletNIO",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle",
                         condition: .when(traits: ["Hummingbird"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Hummingbird"])),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // `make serve`: the hello example, a Hummingbird router on Ringlet (127.0.0.1:8080),
        // and the server side of `make bench-http`.
        .executableTarget(
            name: "RingletHello",
            dependencies: [
                "RingletHummingbird", "RingletNIO", "Ringlet",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Hummingbird"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle",
                         condition: .when(traits: ["Hummingbird"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Hummingbird"])),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // `make bench-http`'s baseline: the same routes (HelloRoutes.swift, linked from
        // RingletHello) on Hummingbird's own server and NIOPosix's MultiThreadedEventLoopGroup,
        // without Ringlet in the process; and the driver that loads each side with wrk.
        .executableTarget(
            name: "NIOHelloBench",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Hummingbird"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Hummingbird"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Hummingbird"])),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "HTTPBenchDriver",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // The command-line tool: demo workload, soak, benchmarks against the toolchain's Dispatch.
        .executableTarget(
            name: "ringlet",
            dependencies: [
                "Ringlet",
                "BenchSupport",
                "BenchWorkloadsDispatch",
                "BenchWorkloadsRinglet",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // What both sides of `ringlet bench` share and that touches neither runtime: the
        // rows and their sizes, clocks, /proc readers, the thread sampler, percentiles.
        .target(
            name: "BenchSupport",
            dependencies: [.product(name: "Histogram", package: "hdrhistogram-swift")],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // The benchmark workloads, written once in Sources/BenchWorkloads (not a target of
        // its own) and compiled twice: each of these two targets holds a link
        // `Workloads -> ../BenchWorkloads` and a condition that picks `import Dispatch` or
        // `import Ringlet` (see Sources/BenchWorkloads/Workloads.swift), plus one small
        // file of what only its side does.
        .target(
            name: "BenchWorkloadsDispatch",
            dependencies: ["BenchSupport"],
            swiftSettings: [.define("BENCH_DISPATCH"), .swiftLanguageMode(.v5)]
        ),
        .target(
            name: "BenchWorkloadsRinglet",
            dependencies: ["BenchSupport", "Ringlet"],
            swiftSettings: [.define("BENCH_RINGLET"), .swiftLanguageMode(.v5)]
        ),
        // `make bench-service`: the Ringlet side (a background-clamped service and an urgent
        // client, two processes) and the driver with the baseline — the same two programs
        // over a plain Unix socket and the toolchain's Dispatch (and Foundation's Process).
        .executableTarget(
            name: "RingletServiceBench",
            dependencies: ["Ringlet", "RingletService"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        .executableTarget(
            name: "DispatchServiceBench",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Ringlet's behavioural checks as a standalone program: built by SwiftPM here and
        // in Embedded Swift mode by `make embedded` (and, for boards, `make cross`).
        .executableTarget(
            name: "RingletChecks",
            dependencies: ["Ringlet", "CRingletTestSupport"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // A small demo that uses only Ringlet: built here by SwiftPM and, for boards, in
        // Embedded Swift mode by `make cross` (size) and run on an emulated board by `make sim`.
        .executableTarget(
            name: "RingletDemo",
            dependencies: ["Ringlet"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // What the tests check on a process's real main thread (`@MainActor` in
        // dispatchMain()): a program the concurrency tests start (Tests/.../ConcurrencyMainTests).
        .executableTarget(
            name: "RingletConcurrencyProbe",
            dependencies: ["Ringlet"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // A program that imports Foundation and sits in RunLoop.main: Ringlet's main queue
        // must run there too (Tests/.../OtherLoopTests).
        .executableTarget(
            name: "RingletFoundationProbe",
            dependencies: ["RingletFoundationCompat"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Async mains with only `import Ringlet`, run by the tests
        // (Tests/.../ConcurrencyMainTests): Ringlet's executors from load.
        .executableTarget(
            name: "RingletAsyncMainProbe",
            dependencies: ["Ringlet"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // The async-main rows of `ringlet bench`, a program of their own because their
        // main is async (`make bench` builds it beside `ringlet`).
        .executableTarget(
            name: "RingletAsyncMainBench",
            dependencies: ["Ringlet", "BenchSupport"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Client programs, one per way of importing Ringlet, built from one source
        // (Tests/ImportStyles/Client.swift, linked into each directory as main.swift)
        // whose `#if` picks the imports: Ringlet alone, FoundationEssentials + Ringlet,
        // Foundation + RingletFoundationCompat. `make import-styles` runs them.
        .executableTarget(
            name: "ImportStyleRinglet",
            dependencies: ["Ringlet"],
            path: "Tests/ImportStyles/Ringlet",
            swiftSettings: [.define("IMPORT_STYLE_RINGLET"), .swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "ImportStyleFoundationEssentials",
            dependencies: ["Ringlet"],
            path: "Tests/ImportStyles/FoundationEssentials",
            swiftSettings: [.define("IMPORT_STYLE_FOUNDATION_ESSENTIALS"), .swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "ImportStyleFoundation",
            dependencies: ["RingletFoundationCompat"],
            path: "Tests/ImportStyles/Foundation",
            swiftSettings: [.define("IMPORT_STYLE_FOUNDATION"), .swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "BenchTests",
            dependencies: ["BenchSupport"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "RingletServiceTests",
            dependencies: ["RingletService", "RingletServiceCodable", "Ringlet", "CRingletTestSupport"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "RingletNIOTests",
            dependencies: [
                "RingletNIO", "Ringlet", "CRingletTestSupport",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["NIO"])),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .testTarget(
            name: "RingletTests",
            dependencies: ["Ringlet", "CRinglet", "CRingletTestSupport"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
