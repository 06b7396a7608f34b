# generic: any Linux machine no other profile matches. 'derived' values are read from the
# machine at run time (online CPUs, sysfs cpu_capacity, RAM, page size); workNodes and
# sources follow the memory budget (a quarter of the RAM); the other runtime keys are the
# defaults, so this equals RuntimeConfiguration.derived().
# Format and every key: Boards/README.md. The runtime carries a built-in copy of this file
# (Sources/Ringlet/Configuration/Generated/BuiltInBoards*.swift); BoardProfileTests checks they are equal.

# The board
board = generic
model =
coreCapacities = derived
memoryMegabytes = derived
memoryBudgetBytes = derived
pageBytes = derived
minimumKernel = 5.10

# Cross-compiling and qemu-system: make cross and make sim read these
crossTarget = derived
qemuMachine = derived
qemuCPU = max
qemuMemory = derived
qemuKernel = derived

# Threads (fixed at start)
cores = derived
workersPerCore = 2
reservePerCore = 1
lowQoSWorkers = derived
workerStackBytes = 524288
utilityNice = 5
backgroundSchedIdle = true

# Pools and scheduling
workNodes = derived
# malloc arenas at most (the C library's; each keeps a page or more resident; 0: the C library's own limit)
mallocArenas = derived
drainBatch = 64
spinMicroseconds = 5
deadlockGraceMilliseconds = 2000
mainQueueGraceMilliseconds = 5000
descriptorCheckMilliseconds = 5000
coverCheckMilliseconds = 5
ringEntries = 64
sources = derived

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
ioQueueDepth = 64
ioChunkBytes = 262144
ioRequests = 256
ioBufferBytes = 16777216

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
