# Raspberry Pi 5: BCM2712, 4x Cortex-A76 at 2.4 GHz, 4 GB (also 2, 8, 16 GB).
# Raspberry Pi OS runs its kernel with 16 KiB pages here (kernel8 uses 4 KiB).
# Format and every key: Boards/README.md. The runtime carries a built-in copy of this file
# (Sources/Ringlet/Configuration/Generated/BuiltInBoards*.swift); BoardProfileTests checks they are equal.

# The board
board = raspberry-pi-5
model = Raspberry Pi 5
coreCapacities = 1024,1024,1024,1024
memoryMegabytes = 4096
memoryBudgetBytes = 268435456
pageBytes = 16384
minimumKernel = 6.6

# Cross-compiling and qemu-system: make cross and make sim read these
crossTarget = aarch64-unknown-linux-gnu
qemuMachine = virt
qemuCPU = cortex-a76
qemuMemory = 4G
qemuKernel = linux-image-6.12-arm64-16k

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
ringEntries = 128
sources = 16384

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
ioBufferBytes = 33554432

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
serviceMessageBytes = 65536
