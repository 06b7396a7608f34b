# Raspberry Pi 3 Model B+: BCM2837B0, 4x Cortex-A53 at 1.4 GHz, 1 GB.
# Format and every key: Boards/README.md. The runtime carries a built-in copy of this file
# (Sources/Ringlet/Configuration/Generated/BuiltInBoards*.swift); BoardProfileTests checks they are equal.

# The board
board = raspberry-pi-3b-plus
model = Raspberry Pi 3 Model B Plus
coreCapacities = 1024,1024,1024,1024
memoryMegabytes = 1024
memoryBudgetBytes = 67108864
pageBytes = 4096
minimumKernel = 6.1

# Cross-compiling and qemu-system: make cross and make sim read these
crossTarget = aarch64-unknown-linux-gnu
qemuMachine = virt
qemuCPU = cortex-a53
qemuMemory = 1G
qemuKernel = linux-image-arm64

# Threads (fixed at start)
cores = 4
workersPerCore = 2
reservePerCore = 1
lowQoSWorkers = 4
workerStackBytes = 524288
utilityNice = 5
backgroundSchedIdle = true

# Pools and scheduling
workNodes = 131072
# malloc arenas at most (the C library's; each keeps a page or more resident; 0: the C library's own limit)
mallocArenas = 4
drainBatch = 64
spinMicroseconds = 5
deadlockGraceMilliseconds = 2000
mainQueueGraceMilliseconds = 5000
descriptorCheckMilliseconds = 5000
coverCheckMilliseconds = 5
ringEntries = 64
sources = 8192

# Observing: the signal that makes a running program write its dump (ringlet dump <pid>)
dumpSignal = off
# The trace timeline: off, or the file written at exit (RINGLET_TRACE overrides); events per thread's ring
trace = off
traceEvents = 16384

# Timer leeway by QoS (never applied to .strict timers)
backgroundLeewayPercent = 10
backgroundLeewayMaxMilliseconds = 1000
utilityLeewayPercent = 5
utilityLeewayMaxMilliseconds = 250

# DispatchIO
ioQueueDepth = 32
ioChunkBytes = 262144
ioRequests = 256
ioBufferBytes = 8388608

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
memoryPressurePollMilliseconds = 1000

# Services across processes (RingletService): the largest message payload; both sides must agree
serviceMessageBytes = 32768
