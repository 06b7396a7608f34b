# Watch-class device: 2 small cores, 512 MB, on a battery. Small pools, and wider minimum
# leeway for background and utility timers so that more of them fire together.
# Format and every key: Boards/README.md. The runtime carries a built-in copy of this file
# (Sources/Ringlet/Configuration/Generated/BuiltInBoards*.swift); BoardProfileTests checks they are equal.

# The board
board = watch-class
model =
coreCapacities = 1024,1024
memoryMegabytes = 512
memoryBudgetBytes = 16777216
pageBytes = 4096
minimumKernel = 6.1

# Cross-compiling and qemu-system: make cross and make sim read these
crossTarget = aarch64-unknown-linux-gnu
qemuMachine = virt
qemuCPU = cortex-a53
qemuMemory = 512M
qemuKernel = linux-image-arm64

# Threads (fixed at start)
cores = 2
workersPerCore = 2
reservePerCore = 1
lowQoSWorkers = 2
workerStackBytes = 131072
utilityNice = 5
backgroundSchedIdle = true

# Pools and scheduling
workNodes = 16384
# malloc arenas at most (the C library's; each keeps a page or more resident; 0: the C library's own limit)
mallocArenas = 1
drainBatch = 64
spinMicroseconds = 5
deadlockGraceMilliseconds = 2000
mainQueueGraceMilliseconds = 5000
descriptorCheckMilliseconds = 5000
coverCheckMilliseconds = 5
ringEntries = 32
sources = 1024

# Observing: the signal that makes a running program write its dump (ringlet dump <pid>)
dumpSignal = off
# The trace timeline: off, or the file written at exit (RINGLET_TRACE overrides); events per thread's ring
trace = off
traceEvents = 16384

# Timer leeway by QoS (never applied to .strict timers)
backgroundLeewayPercent = 20
backgroundLeewayMaxMilliseconds = 2000
utilityLeewayPercent = 10
utilityLeewayMaxMilliseconds = 500

# DispatchIO
ioQueueDepth = 8
ioChunkBytes = 65536
ioRequests = 64
ioBufferBytes = 1048576

# Kernel backend: auto (io_uring, else epoll with one line saying why), io_uring or epoll
backend = auto
# Swift concurrency (tasks, actors, Task.sleep) on Ringlet's pool; false: the toolchain's executor
swiftConcurrency = true

# Memory-pressure sources (PSI): .warning at this share of `some` stall, .critical at this share of `full`
# stall, over the window; how often a raised level looks for the fall, and the rate of reading the file
# where the kernel refuses a trigger
memoryWarningSomePercent = 10
memoryCriticalFullPercent = 5
memoryPressureWindowMilliseconds = 2000
memoryPressureRecheckMilliseconds = 1000
memoryPressurePollMilliseconds = 2000

# Services across processes (RingletService): the largest message payload; both sides must agree
serviceMessageBytes = 16384
