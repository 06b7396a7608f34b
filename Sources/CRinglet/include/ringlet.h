// ringlet.h — what the Swift runtime imports from the C side of the syscall boundary.
//
// Fixed-width C builtin types and opaque handles only: no libc or Linux header is
// included here, so the Swift target imports nothing from the platform and builds in
// Embedded Swift mode for any target (Architecture, "One OS boundary": the DocC
// article in Sources/Ringlet/Ringlet.docc). Every function
// returns 0 or a positive value on success and a negative errno on failure, unless
// its comment says otherwise.
#ifndef RINGLET_H
#define RINGLET_H

#ifdef __cplusplus
extern "C" {
#endif

// MARK: Atomics on raw words (used for futex words that must have a stable address)

static inline unsigned int rl_atomic_load_u32(unsigned int *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}
static inline unsigned int rl_atomic_exchange_u32(unsigned int *word, unsigned int value) {
    return __atomic_exchange_n(word, value, __ATOMIC_ACQ_REL);
}
/// Returns 1 and stores `desired` when `*word == expected`; else 0 and leaves `*word`.
static inline int rl_atomic_cas_u32(unsigned int *word, unsigned int expected, unsigned int desired) {
    return __atomic_compare_exchange_n(word, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
static inline unsigned int rl_atomic_add_u32(unsigned int *word, unsigned int delta) {
    return __atomic_add_fetch(word, delta, __ATOMIC_ACQ_REL);
}

/// Pointer-sized links in raw memory (a work node's `next`, Queues/QueueInbox.swift):
/// a release store by the producer that links, an acquire load by the consumer.
static inline void *rl_atomic_load_ptr(void *slot) {
    return __atomic_load_n((void **)slot, __ATOMIC_ACQUIRE);
}
static inline void rl_atomic_store_ptr(void *slot, void *value) {
    __atomic_store_n((void **)slot, value, __ATOMIC_RELEASE);
}

/// A spin-wait hint to the CPU (PAUSE on x86, YIELD on AArch64).
static inline void rl_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

/// Single-writer counters: the owning thread adds with plain (relaxed) loads and
/// stores — no locked instruction — and any thread may read.
static inline void rl_counter_add(long long *slot, long long delta) {
    __atomic_store_n(slot, __atomic_load_n(slot, __ATOMIC_RELAXED) + delta, __ATOMIC_RELAXED);
}
static inline long long rl_counter_read(long long *slot) {
    return __atomic_load_n(slot, __ATOMIC_RELAXED);
}

// MARK: Trace rings (Observe/TraceBuffer.swift)

/// A trace ring's words: its owner stores them relaxed (a plain store, no locked
/// instruction) and publishes its count with a release store; the writer of the file
/// reads the count with acquire and the words relaxed, so reading a ring while its
/// thread records is no data race (a torn event is detected by the count and dropped).
static inline void rl_word_store(unsigned long long *word, unsigned long long value) {
    __atomic_store_n(word, value, __ATOMIC_RELAXED);
}
static inline unsigned long long rl_word_load(unsigned long long *word) {
    return __atomic_load_n(word, __ATOMIC_RELAXED);
}
static inline void rl_word_publish(unsigned long long *word, unsigned long long value) {
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
}
static inline unsigned long long rl_word_acquire(unsigned long long *word) {
    return __atomic_load_n(word, __ATOMIC_ACQUIRE);
}
/// Orders the relaxed loads before it ahead of the loads after it (a reader that
/// copied a ring checks afterwards that its owner did not overwrite what it copied).
static inline void rl_fence_acquire(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }

// MARK: Futex (futex(2), private futexes only)

/// Sleeps while `*word == expected`, at most `timeout_ns` nanoseconds (< 0: forever).
/// Returns 0 when woken (possibly spuriously), -EAGAIN when `*word != expected`,
/// -ETIMEDOUT, or -EINTR.
int rl_futex_wait(unsigned int *word, unsigned int expected, long long timeout_ns);
/// Wakes up to `count` threads sleeping on `word`; returns how many were woken.
int rl_futex_wake(unsigned int *word, int count);

/// An event word pair (`word[0]` the post count, `word[1]` an eventfd + 1 while its one
/// sleeper waits in epoll instead of on the futex: Source/BandDescriptors.swift). Wakes
/// the sleeper either way: a write to that eventfd, else a futex wake of up to `count`.
/// The seq-cst fence pairs with rl_event_sleep_in_epoll's: a post made just before the
/// sleeper marks itself is seen by the sleeper's check of `word[0]`, or the mark by us.
int rl_event_wake(unsigned int *word, int count);
/// Whether the sleeper of `word` waits in epoll now (after the same fence).
int rl_event_sleeps_in_epoll(unsigned int *word);
/// Marks (`eventfd` ≥ 0) or unmarks (-1) the sleeper of `word` as waiting in epoll;
/// marking ends with a seq-cst fence, so the caller's next look at `word[0]` is ordered.
void rl_event_sleep_in_epoll(unsigned int *word, int eventfd);

// MARK: Clocks (clock_gettime(2))

/// CLOCK_MONOTONIC in nanoseconds: what DispatchTime counts (uptime, stops in suspend).
unsigned long long rl_clock_monotonic_ns(void);
/// CLOCK_REALTIME in nanoseconds since 1970: what DispatchWallTime counts.
long long rl_clock_realtime_ns(void);
/// Sleeps until CLOCK_MONOTONIC reaches `deadline_ns` (clock_nanosleep, TIMER_ABSTIME,
/// the thread's timer slack at 1 ns meanwhile, then back to its default; EINTR
/// retried). 0 or -errno.
int rl_sleep_until_monotonic_ns(unsigned long long deadline_ns);
/// Sleeps `ns` nanoseconds (nanosleep, the thread's timer slack left as it is; an
/// interrupted sleep ends early). 0 or -errno.
int rl_nap_ns(unsigned long long ns);

// MARK: Threads

/// Gives the processor to another runnable thread (sched_yield(2)).
void rl_thread_yield(void);
typedef void (*rl_thread_entry)(void *context);
/// Starts a detached thread running `entry(context)` with a stack of `stack_bytes`
/// (0: the system default; less than the C library's minimum, 128 KiB on aarch64
/// glibc: that minimum), with asynchronous signals blocked. Returns 0 or -errno
/// (pthread_create(3)).
int rl_thread_start(rl_thread_entry entry, void *context, unsigned long long stack_bytes);
/// Writes the label of the queue whose item the calling thread runs into `buffer`
/// (at most `size` bytes, no terminating zero) and returns its length; 0 for none.
/// Called from a signal handler: it must not allocate or take a lock.
typedef unsigned long (*rl_stack_label_writer)(char *buffer, unsigned long size);
/// Installs, once per process, the handler that reports a Ringlet thread running out
/// of stack (SIGSEGV and SIGBUS, on the alternate stack rl_thread_start gives each
/// thread) and then hands the fault on to the program's previous action. 0 or -errno.
int rl_stack_guard_install(rl_stack_label_writer writer);
/// Blocks SIGPIPE in the calling thread (the manager, which issues DispatchIO's
/// writes): a write to a pipe or socket whose reader has gone then fails with EPIPE
/// instead of ending the process, and the signal stays pending on this thread only.
int rl_thread_block_pipe_signal(void);
/// Takes a SIGPIPE pending for the calling thread (sigtimedwait(2), no wait), so a
/// blocked one raised by the thread's own write does not linger. 1 taken, 0 none.
/// Call it only right after a write of this thread failed with EPIPE: with none of
/// its own pending it would take one sent to the whole process.
int rl_thread_take_pipe_signal(void);
/// The kernel thread id of the caller (gettid(2)).
int rl_thread_id(void);
/// The process id (getpid(2)).
int rl_process_id(void);
/// Names the calling thread (at most 15 bytes are kept; prctl(PR_SET_NAME)).
void rl_thread_set_name(const char *name);
/// Sets the nice value of the calling thread (setpriority(2) on its tid). 0 or -errno.
int rl_thread_set_nice(int nice);
/// Moves the calling thread to SCHED_IDLE (sched(7)). 0 or -errno. One way: an
/// unprivileged thread cannot come back to SCHED_OTHER.
int rl_thread_set_sched_idle(void);
/// The calling thread's nice value, and 1 in *is_idle when it runs at SCHED_IDLE.
int rl_thread_get_nice(int *is_idle);
/// Number of online CPUs (sysconf(_SC_NPROCESSORS_ONLN)), at least 1.
int rl_cpu_count(void);
/// Number of threads of this process (entries in /proc/self/task), or -errno.
int rl_process_thread_count(void);
/// The calling thread's CPU-time clock (pthread_getcpuclockid(3)), which any thread
/// may read with rl_thread_cpu_ns. 0 or -errno.
int rl_thread_cpu_clock(int *clock);
/// CPU time a thread has used, in nanoseconds, through its CPU-time clock; -errno.
long long rl_thread_cpu_ns(int clock);
/// The scheduling state of thread `tid` of this process: the state letter of
/// /proc/self/task/<tid>/stat ('R' running or runnable, 'S' sleeping, 'D' in
/// uninterruptible sleep, ...), or -errno.
int rl_thread_state(int tid);
/// Context switches (voluntary + involuntary) summed over this process's threads
/// whose name starts with `name_prefix` ("" for all), from /proc/self/task/*/status;
/// -errno when /proc is unreadable.
long long rl_context_switches(const char *name_prefix);
/// The voluntary ones alone (a thread that blocked or parked), which another
/// process's load on the CPU does not add to, unlike preemptions.
long long rl_voluntary_context_switches(const char *name_prefix);
/// Resources for rl_resource_limit (mapped to RLIMIT_* in C, which differ between
/// architectures).
#define RL_LIMIT_ADDRESS_SPACE 0   /* RLIMIT_AS */
#define RL_LIMIT_THREADS 1         /* RLIMIT_NPROC: threads of the user, all processes */
#define RL_LIMIT_OPEN_FILES 2      /* RLIMIT_NOFILE */
#define RL_LIMIT_STACK 3           /* RLIMIT_STACK: glibc's default thread stack */
/// getrlimit(2): the soft and hard limits of `resource` (RL_LIMIT_*), ~0ULL for
/// unlimited. 0 or -errno.
int rl_resource_limit(int resource, unsigned long long *soft, unsigned long long *hard);

// MARK: Thread-local context

/// The slot behind rl_tls_get: set only through rl_tls_set.
extern __thread void *rl_tls_context;
/// The calling thread's Ringlet context pointer (a Swift object), or 0. Inline, so
/// that the submit and drain paths read the slot without a call.
static inline void *rl_tls_get(void) { return rl_tls_context; }
/// Sets the context pointer. When a thread that set one exits, `release` (registered
/// once with rl_tls_set_release) is called with it.
void rl_tls_set(void *context);
typedef void (*rl_tls_release_fn)(void *context);
void rl_tls_set_release(rl_tls_release_fn release);

// MARK: Process

/// Writes all of `bytes` to stderr (retrying EINTR and short writes).
void rl_write_stderr(const char *bytes, long long count);
/// Writes `count` bytes to `path` as a new file readable by the owner only (0600):
/// to `path`.tmp (created exclusively, never through a symlink), then renamed over
/// `path`, so a reader sees the whole file or none. 0 or -errno.
int rl_write_file_replacing(const char *path, const char *bytes, long long count);
/// Aborts the process with SIGABRT after flushing nothing (abort(3)).
void rl_abort(void) __attribute__((noreturn));
/// Ends the process with `status` (exit(3): atexit handlers run, stdio is flushed).
void rl_exit(int status) __attribute__((noreturn));
/// Runs `hook` when the process exits through exit(3) or a return from main
/// (atexit(3)); returns 0, or -ENOMEM when the C library's table is full.
int rl_at_exit(void (*hook)(void));
/// Reads an environment variable; returns 0 when unset.
const char *rl_getenv(const char *name);
/// The symbolic name of an errno value ("EMFILE"), or 0 for one the C library does
/// not name (strerrorname_np(3)).
const char *rl_errno_name(int value);
/// The board profile for a runtime started on first use: returns 1 and sets
/// `*profile` to a retained Swift object (or 0: start with the derived configuration)
/// when board selection is linked in; returns 0 when the program was linked with
/// ringlet_first_use.c's RINGLET_EXPLICIT_START variant, which leaves selection out.
int rl_first_use_board(void **profile);
/// Whether RINGLET_TRACE may turn the trace recorder on: returns 1 after linking the
/// recorder's start (Runtime/OptionalParts.swift), or 0 when the program was linked
/// with ringlet_first_use.c's RINGLET_EXPLICIT_START variant, which leaves it out.
int rl_environment_trace(void);

/// Starts RingletFoundationCompat's run-loop bridge when the program links it (its
/// main queue then also runs inside Foundation's RunLoop.main): 1, or 0 when the
/// program has none (ringlet_run_loop.c).
int rl_run_loop_bridge_start(void);

/// What the load-time constructor did about Swift concurrency's executors
/// (ringlet_executors.c).
#define RL_EXECUTORS_NOT_AVAILABLE 0       // no executor hooks in this build
#define RL_EXECUTORS_INSTALLED 1           // Ringlet's, before main
#define RL_EXECUTORS_KEPT_BY_ENVIRONMENT 2 // RINGLET_SWIFT_CONCURRENCY=toolchain
#define RL_EXECUTORS_KEPT_BY_SYMBOL 3      // the program defines ringlet_keep_toolchain_executors
#define RL_EXECUTORS_BAD_ENVIRONMENT 4     // RINGLET_SWIFT_CONCURRENCY has another value: kept
int rl_executors_at_load(void);

/// A PSI trigger (`some|full <stall µs> <window µs>`) on the pressure file at `path`:
/// the descriptor, which signals POLLPRI when the trigger fires, or -errno (EPERM before
/// Linux 6.5 without CAP_SYS_RESOURCE; EINVAL for a window an unprivileged process may
/// not use, one not a multiple of 2 s; ENOENT or EOPNOTSUPP without PSI)
/// (ringlet_pressure.c).
int rl_psi_trigger(const char *path, const char *trigger);
/// madvise(MADV_DONTNEED) over `length` bytes at the page-aligned `address`: the pages
/// go back to the system and read as zeros when next touched. 0 or -errno.
int rl_give_back_pages(void *address, unsigned long long length);
/// Reserves `bytes` of memory, touched only when used: malloc(3) below 2 MiB, else a
/// mapping of its own kept out of transparent huge pages; 0 when the system refuses
/// (RLIMIT_AS, overcommit). Given back with rl_release_memory and the same `bytes`.
void *rl_reserve_memory(unsigned long long bytes);
void rl_release_memory(void *memory, unsigned long long bytes);
/// The address-space limit (RLIMIT_AS) in bytes, or -1 when unlimited.
long long rl_address_space_limit(void);
/// Caps the C library's malloc arenas at `arenas` (glibc's mallopt M_ARENA_MAX; 0
/// leaves its default). Returns 1 when set, 0 when the C library has no such setting.
int rl_malloc_arena_max(int arenas);

// MARK: fork(2)

/// Set to 1 in the child of a fork(2) made after `rl_fork_guard_install` (pthread_atfork).
extern int rl_forked_child_flag;
/// Registers the fork handler once (later calls do nothing). The parent's pid is kept.
void rl_fork_guard_install(void);
/// The pid of the process that installed the guard (the parent of a forked child).
int rl_fork_guard_parent(void);
/// 1 in the child of a fork(2) made after the runtime started, else 0. One load.
static inline int rl_in_forked_child(void) {
    return __atomic_load_n(&rl_forked_child_flag, __ATOMIC_RELAXED);
}

// MARK: io_uring (liburing)

/// What the kernel's io_uring offers, filled by rl_uring_probe.
struct rl_uring_info {
    unsigned int features;        ///< IORING_FEAT_* bits from io_uring_setup(2)
    int last_opcode;              ///< highest opcode the probe knows (io_uring_register_probe)
    int supports_poll_multishot;  ///< IORING_POLL_ADD_MULTI accepted (kernel >= 5.13)
    int supports_timeout;         ///< IORING_OP_TIMEOUT
    int supports_read;            ///< IORING_OP_READ
};
/// Creates and destroys a small ring to learn whether io_uring works here.
/// Returns 0, or -errno from io_uring_setup(2): -ENOSYS (no io_uring), -EPERM
/// (seccomp or kernel.io_uring_disabled=2), -ENOMEM (RLIMIT_MEMLOCK on kernels < 5.12).
int rl_uring_probe(struct rl_uring_info *info);
/// The value of /proc/sys/kernel/io_uring_disabled (0, 1, 2), or -1 when absent.
int rl_uring_disabled_sysctl(void);

/// An io_uring owned by one thread (opaque).
typedef struct rl_ring rl_ring;

/// Setup flags, as the kernel defines them (io_uring_setup(2)).
#define RL_RING_SINGLE_ISSUER (1U << 12)
#define RL_RING_DEFER_TASKRUN (1U << 13)
#define RL_RING_COOP_TASKRUN  (1U << 8)

/// Creates a ring of `sq_entries` submissions and `cq_entries` completions, trying
/// SINGLE_ISSUER|DEFER_TASKRUN, then COOP_TASKRUN, then no flag. Returns the ring,
/// with the flags in force in *setup_flags and the kernel's IORING_FEAT_* bits in
/// *features; or 0 with -errno of the last attempt in *error.
rl_ring *rl_ring_create(unsigned int sq_entries, unsigned int cq_entries, unsigned int *setup_flags,
                        unsigned int *features, int *error);
void rl_ring_destroy(rl_ring *ring);
/// The first opcode the manager needs that the kernel's probe lacks (a static name
/// with the Linux version that added it), or 0 when all are there.
const char *rl_ring_missing_opcode(rl_ring *ring);
/// Queues an IORING_OP_TIMEOUT that completes at `deadline_ns` on CLOCK_MONOTONIC
/// (absolute). 0, or -EBUSY when the submission queue is full even after submitting.
int rl_ring_prep_timeout(rl_ring *ring, unsigned long long deadline_ns, unsigned long long user_data);
/// Queues the removal of the timeout queued with `target` (IORING_OP_TIMEOUT_REMOVE).
int rl_ring_prep_timeout_remove(rl_ring *ring, unsigned long long target, unsigned long long user_data);
/// Queues a read of up to `length` bytes from `fd` into `buffer` (IORING_OP_READ).
int rl_ring_prep_read(rl_ring *ring, int fd, void *buffer, unsigned int length, unsigned long long offset,
                      unsigned long long user_data);
/// Queues a one-shot POLLIN poll of `fd` (IORING_OP_POLL_ADD, Linux 5.1+).
int rl_ring_prep_poll_in(rl_ring *ring, int fd, unsigned long long user_data);
/// 1 when the kernel has IORING_OP_FUTEX_WAKE (Linux 6.7), else 0.
int rl_ring_supports_futex_wake(rl_ring *ring);
/// Queues a wake of one waiter on the private futex `word` (IORING_OP_FUTEX_WAKE). It
/// completes only on failure (IOSQE_CQE_SKIP_SUCCESS), with -errno and `user_data`.
int rl_ring_prep_futex_wake(rl_ring *ring, unsigned int *word, unsigned long long user_data);
/// Submits what is queued and waits for at least `wait_nr` completions.
/// Returns the number submitted, or -errno (EINTR, EBUSY, EAGAIN...).
int rl_ring_submit_and_wait(rl_ring *ring, unsigned int wait_nr);
/// Takes one completion if there is one: returns 1 and fills the outputs, or 0.
int rl_ring_next_completion(rl_ring *ring, unsigned long long *user_data, int *result, unsigned int *flags);
/// Completions the kernel dropped because the completion queue was full
/// (IORING_FEAT_NODROP kernels keep them instead and report none here).
unsigned int rl_ring_overflow_count(rl_ring *ring);

/// An eventfd (EFD_CLOEXEC | EFD_NONBLOCK) for waking a ring's owner; -errno on failure.
int rl_eventfd_create(void);
/// Adds 1 to an eventfd (write(2)); 0 or -errno.
int rl_eventfd_signal(int fd);
/// Resets an eventfd to 0 (a non-blocking read(2)); 0, or -errno (-EAGAIN: it was 0).
int rl_eventfd_drain(int fd);
/// Closes a file descriptor.
void rl_close(int fd);

// MARK: The epoll backend (ringlet_epoll.c)

/// epoll_ctl(2) operations for rl_epoll_control.
#define RL_EPOLL_ADD 1
#define RL_EPOLL_MODIFY 2
#define RL_EPOLL_DELETE 3
/// EPOLLET: report an fd when it becomes ready (a wake-up), not while it stays ready.
#define RL_EPOLL_EDGE (1U << 31)
/// epoll_create1(EPOLL_CLOEXEC): the epoll fd or -errno.
int rl_epoll_create(void);
/// epoll_ctl(2) of `fd` in `epfd` for `events` (RL_POLL* bits, RL_EPOLL_EDGE) with
/// `data` handed back by rl_epoll_wait. 0 or -errno (-EPERM: `fd` cannot be polled,
/// as a regular file; -EEXIST, -ENOENT, -EBADF, -ENOMEM, -ENOSPC).
int rl_epoll_control(int epfd, int op, int fd, unsigned int events, unsigned long long data);
/// epoll_wait(2) for at most `capacity` (≤ 64) ready fds, `timeout_ms` < 0: no limit.
/// Fills `data` and `events` per fd; returns their count, or -errno (-EINTR).
int rl_epoll_wait(int epfd, unsigned long long *data, unsigned int *events, int capacity, int timeout_ms);
/// epoll_pwait2(2) for at most `capacity` (≤ 64) ready fds, `timeout_ns` < 0: no limit;
/// fills only `data`. Before Linux 5.11 (ENOSYS, or EPERM from a seccomp filter that
/// does not know the call), epoll_wait(2) with the timeout
/// rounded up to a millisecond. Returns the count, or -errno (-EINTR).
int rl_epoll_wait_data_ns(int epfd, unsigned long long *data, int capacity, long long timeout_ns);
/// timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC): its fd or -errno.
int rl_timerfd_create_monotonic(void);
/// Arms the timerfd to expire at `deadline_ns` on CLOCK_MONOTONIC (absolute; 0 or a
/// deadline in the past expires at once). 0 or -errno.
int rl_timerfd_set_absolute(int fd, unsigned long long deadline_ns);
/// Disarms the timerfd. 0 or -errno.
int rl_timerfd_disarm(int fd);
/// A read (is_write == 0) or write of `length` bytes at `offset` (-1: the file
/// position) that never blocks: preadv2/pwritev2 with RWF_NOWAIT, EINTR retried.
/// The bytes moved, or -errno: -EAGAIN (not ready, or not in the page cache),
/// -EOPNOTSUPP (the file does not support RWF_NOWAIT and is not O_NONBLOCK: use
/// rl_fd_transfer_blocking on a thread that may block), or the transfer's own error.
/// At the file position, a file without RWF_NOWAIT but opened O_NONBLOCK is read or
/// written with a plain read(2) or write(2), which cannot block.
long long rl_fd_transfer_nowait(int is_write, int fd, void *buffer, unsigned long long length, long long offset);
/// The same transfer, blocking (read/write at the position when `offset` < 0, else
/// pread/pwrite), EINTR retried: for the epoll backend's I/O helper threads only.
long long rl_fd_transfer_blocking(int is_write, int fd, void *buffer, unsigned long long length, long long offset);
/// ioprio_set(2) of the calling thread (class << 13 | level; 0: none). 0 or -errno.
int rl_thread_set_io_priority(unsigned short ioprio);

// MARK: Sources (ringlet_source.c)

/// poll(2) event bits, as the kernel defines them.
#define RL_POLLIN  0x001U
#define RL_POLLPRI 0x002U
#define RL_POLLOUT 0x004U
#define RL_POLLERR 0x008U
#define RL_POLLHUP 0x010U
/// IORING_CQE_F_MORE: a multishot request will post more completions.
#define RL_CQE_F_MORE (1U << 1)
/// Signal numbers Ringlet can watch are below this (standard and real-time signals).
#define RL_SIGNAL_LIMIT 65

/// Queues a readiness poll of `fd` for `events`; `multishot` keeps it armed
/// (IORING_POLL_ADD_MULTI, Linux 5.13+). 0 or -EBUSY.
int rl_ring_prep_poll(rl_ring *ring, int fd, unsigned int events, int multishot, unsigned long long user_data);
/// Queues the removal of the poll queued with `target` (IORING_OP_POLL_REMOVE).
int rl_ring_prep_poll_remove(rl_ring *ring, unsigned long long target, unsigned long long user_data);

/// 0 when `fd` is an open descriptor, else -EBADF (fcntl F_GETFD).
int rl_fd_check(int fd);
/// Bytes waiting to be read from `fd` (FIONREAD), or -errno.
long long rl_fd_readable_bytes(int fd);
/// Bytes that can be written to `fd` without blocking: a pipe's free capacity or a
/// socket's free send buffer; -ENOTSUP for other descriptors.
long long rl_fd_writable_bytes(int fd);
/// poll(2) with a zero timeout: the ready events among `events` (0 when none), or -errno.
int rl_fd_poll_now(int fd, unsigned int events);
/// fstat(2): size and link count.
int rl_fd_stat(int fd, long long *size, long long *links);
/// fstat(2): the device and inode `fd` names, which tell whether the number still
/// names the same file (a closed and reused fd names another). 0 or -errno.
int rl_fd_identity(int fd, unsigned long long *device, unsigned long long *inode);

/// pidfd_open(2): a descriptor that becomes readable when `pid` exits; -errno
/// (-ESRCH: no such process, -ENOSYS: kernel before 5.3).
int rl_pidfd_open(int pid);

/// Creates an inotify instance watching the file open as `fd` (through
/// /proc/self/fd): modify, attrib, delete-self, move-self, unmount. Its fd or -errno.
int rl_inotify_watch_fd(int fd, unsigned int *mask_out);
/// Reads every pending inotify event; the OR of their IN_* masks, or -errno.
long long rl_inotify_take(int ifd);
/// IN_* bits of inotify(7).
#define RL_IN_MODIFY      0x00000002U
#define RL_IN_ATTRIB      0x00000004U
#define RL_IN_MOVE_SELF   0x00000800U
#define RL_IN_DELETE_SELF 0x00000400U
#define RL_IN_UNMOUNT     0x00002000U
#define RL_IN_IGNORED     0x00008000U

/// The eventfd Ringlet's signal handler writes to wake the manager (-1: none).
void rl_signal_set_wake_fd(int fd);
/// What `signo` is to a signal source: RL_SIGNAL_CATCHABLE, or why it cannot be watched.
#define RL_SIGNAL_CATCHABLE 0
#define RL_SIGNAL_OUT_OF_RANGE 1    /* not 1...SIGRTMAX (64) */
#define RL_SIGNAL_UNCATCHABLE 2     /* SIGKILL or SIGSTOP */
#define RL_SIGNAL_LIBC_RESERVED 3   /* 32 and 33: glibc's own, below SIGRTMIN */
int rl_signal_class(int signo);
/// SIGRTMIN as the C library defines it at run time (34 with glibc).
int rl_signal_realtime_min(void);
/// Installs Ringlet's handler for `signo`: it counts the signal, wakes the manager
/// and then calls the handler that was installed before (which keeps working).
int rl_signal_install(int signo);
/// Puts the previous handler back (unless the program replaced Ringlet's since).
int rl_signal_uninstall(int signo);
/// Signals of `signo` the handler caught since the last call.
unsigned int rl_signal_take_caught(int signo);
/// Creates (fd < 0) or updates a signalfd for the signals whose `watched[signo]`
/// is non-zero (RL_SIGNAL_LIMIT entries). The fd or -errno.
int rl_signalfd_update(int fd, const unsigned char *watched);
/// Reads every pending signal from a signalfd, adds each to `counts[signo]` and calls
/// the program's previous handler for it (on the calling thread). 0 or -errno.
int rl_signalfd_take(int fd, unsigned int *counts);

/// Creates (fd < 0) or re-arms a CLOCK_REALTIME timerfd that becomes readable when
/// the wall clock is set (TFD_TIMER_CANCEL_ON_SET). The fd or -errno.
int rl_clock_change_watch(int fd);

// MARK: I/O channels (ringlet_io.c, ringlet_uring.c)

/// Queues a read (write == 0) or write of `length` bytes at `offset` (~0ULL: the
/// file position, for pipes and sockets) with I/O priority `ioprio`. 0 or -EBUSY.
int rl_ring_prep_rw(rl_ring *ring, int write, int fd, void *buffer, unsigned int length,
                    unsigned long long offset, unsigned short ioprio, unsigned long long user_data);
/// Queues the cancellation of the request whose user data is `target`.
int rl_ring_prep_cancel(rl_ring *ring, unsigned long long target, unsigned long long user_data);

/// What an I/O channel's descriptor is (rl_fd_describe).
#define RL_FD_REGULAR 1   /* regular file or block device: reads and writes take offsets */
#define RL_FD_STREAM 2    /* pipe, FIFO, socket, character device: no offsets */
/// Describes `fd`: its kind (RL_FD_*), its current offset (0 for streams) and whether
/// it was opened with O_APPEND. 0 or -errno (-EBADF for a closed fd).
int rl_fd_describe(int fd, int *kind, long long *position, int *append);
/// lseek(fd, position, SEEK_SET). 0 or -errno.
int rl_fd_seek(int fd, long long position);
/// lseek(fd, 0, SEEK_CUR): the descriptor's file position, or -errno.
long long rl_fd_position(int fd);
/// open(2) with O_CLOEXEC added; the fd or -errno.
int rl_open(const char *path, int flags, unsigned int mode);
/// free(3) and munmap(2), for DispatchData deallocators.
void rl_free(void *pointer);
void rl_munmap(void *pointer, unsigned long long length);
/// I/O priority value for a QoS (class << 13 | level): see ioprio_set(2).
#define RL_IOPRIO_CLASS_BE 2
#define RL_IOPRIO_CLASS_IDLE 3

// MARK: Sockets (ringlet_net.c; Sources/Ringlet/Net)

/// Linux's numbers (ringlet_net.c checks them against its headers).
#define RL_AF_UNIX 1
#define RL_AF_INET 2
#define RL_AF_INET6 10
#define RL_SOCK_STREAM 1
#define RL_SOCK_DGRAM 2
#define RL_SOCK_SEQPACKET 5
#define RL_SHUT_RD 0
#define RL_SHUT_WR 1
#define RL_SHUT_RDWR 2
#define RL_SOL_SOCKET 1
#define RL_SCM_RIGHTS 1
#define RL_SCM_CREDENTIALS 2
#define RL_SO_REUSEADDR 2
#define RL_SO_SNDBUF 7
#define RL_SO_RCVBUF 8
#define RL_SO_KEEPALIVE 9
#define RL_SO_PASSCRED 16
#define RL_IPPROTO_TCP 6
#define RL_TCP_NODELAY 1
#define RL_MSG_CTRUNC 0x8
#define RL_MSG_TRUNC 0x20
/// Room for any socket address (sizeof(struct sockaddr_storage)).
#define RL_ADDRESS_BYTES 128
/// struct ucred: pid, uid, gid (SCM_CREDENTIALS, SO_PEERCRED).
#define RL_CREDENTIALS_BYTES 12

/// socket(2) and socketpair(2) (AF_UNIX) with SOCK_NONBLOCK | SOCK_CLOEXEC: the fd, or -errno.
int rl_socket_open(int family, int type);
int rl_socket_pair(int type, int *first, int *second);
/// Sets O_NONBLOCK (an adopted socket: the epoll backend's calls must never block).
int rl_socket_make_nonblocking(int fd);
int rl_socket_bind(int fd, const void *address, unsigned int length);
int rl_socket_listen(int fd, int backlog);
int rl_socket_set_int_option(int fd, int level, int name, int value);
int rl_socket_get_int_option(int fd, int level, int name, int *value);
/// getsockname(2), getpeername(2) into RL_ADDRESS_BYTES at `address`.
int rl_socket_local_address(int fd, void *address, unsigned int *length);
int rl_socket_peer_address(int fd, void *address, unsigned int *length);
/// SO_PEERCRED: the peer's pid, uid and gid when it connected.
int rl_socket_peer_credentials(int fd, int *pid, unsigned int *uid, unsigned int *gid);
/// This process's struct ucred (RL_CREDENTIALS_BYTES), for SCM_CREDENTIALS.
void rl_socket_own_credentials(void *credentials);
/// A numeric IPv4 or IPv6 address (inet_pton(3)) and port into RL_ADDRESS_BYTES.
int rl_address_inet(const char *host, int port, void *address, unsigned int *length);
/// An AF_UNIX address: a filesystem path, or (abstract != 0) a name in the abstract namespace.
int rl_address_unix(const char *path, unsigned int path_length, int abstract, void *address, unsigned int *length);
int rl_address_family(const void *address, unsigned int length);
int rl_address_port(const void *address, unsigned int length);
/// The host of an AF_INET/AF_INET6 address as text (inet_ntop(3)).
int rl_address_host(const void *address, unsigned int length, char *out, unsigned int capacity);
/// The path or abstract name of an AF_UNIX address: its length, or -errno.
int rl_address_unix_path(const void *address, unsigned int length, char *out, unsigned int capacity,
                         int *abstract);

/// A struct msghdr with its iovecs, control buffer and address, alive until the
/// request that uses it completes (Net/SocketMessage.swift).
typedef struct rl_message rl_message;
rl_message *rl_message_create(unsigned int iov_capacity, unsigned int control_capacity);
void rl_message_destroy(rl_message *message);
/// Adds a buffer to move (-ENOSPC past `iov_capacity`).
int rl_message_add_buffer(rl_message *message, void *base, unsigned long long length);
/// Adds a control message to send (-ENOSPC past `control_capacity`).
int rl_message_add_control(rl_message *message, int level, int type, const void *data, unsigned int length);
/// After a short send: the next request starts `bytes` further.
void rl_message_consume(rl_message *message, unsigned long long bytes);
unsigned long long rl_message_remaining(const rl_message *message);
/// Control data goes with the first bytes of a stream only.
void rl_message_drop_control(rl_message *message);
/// After a receive: msg_flags (RL_MSG_TRUNC, RL_MSG_CTRUNC), the sender's address,
/// and the control messages one by one (cursor from 0; 1 while there is one).
int rl_message_flags(const rl_message *message);
unsigned int rl_message_address(const rl_message *message, void *address);
int rl_message_next_control(const rl_message *message, unsigned int *cursor, int *level, int *type,
                            const void **data, unsigned int *length);
/// CMSG_SPACE(length).
unsigned int rl_control_space(unsigned int length);

/// Socket requests on the ring (IORING_OP_ACCEPT with IORING_ACCEPT_MULTISHOT on
/// 5.19+, CONNECT, RECVMSG with MSG_CMSG_CLOEXEC, SENDMSG with MSG_NOSIGNAL; a shutdown
/// is rl_socket_shutdown, which never blocks, where IORING_OP_SHUTDOWN always goes to an
/// io-wq thread). Accepted sockets are SOCK_NONBLOCK | SOCK_CLOEXEC. 0 or -EBUSY.
int rl_ring_prep_accept(rl_ring *ring, int fd, int multishot, unsigned long long user_data);
int rl_ring_prep_connect(rl_ring *ring, int fd, const void *address, unsigned int length,
                         unsigned long long user_data);
int rl_ring_prep_recvmsg(rl_ring *ring, int fd, rl_message *message, unsigned long long user_data);
int rl_ring_prep_sendmsg(rl_ring *ring, int fd, rl_message *message, unsigned long long user_data);
/// The same, made at once and never blocking (the epoll backend): a result or -errno
/// (-EAGAIN: not ready; connect: -EINPROGRESS, then rl_socket_connect_result once writable).
int rl_socket_accept_now(int fd);
int rl_socket_connect_now(int fd, const void *address, unsigned int length);
int rl_socket_connect_result(int fd);
long long rl_socket_recvmsg_now(int fd, rl_message *message);
long long rl_socket_sendmsg_now(int fd, rl_message *message);
int rl_socket_shutdown(int fd, int how);

/// Provided buffers: a ring of `count` (a power of two, at most 32768) buffer slots the
/// kernel picks receive buffers from, registered as group `group` on the ring
/// (IORING_REGISTER_PBUF_RING, Linux 5.19; the ring's owner only). NULL with -errno in
/// *error when refused (-EINVAL: an older kernel).
typedef struct rl_buffer_ring rl_buffer_ring;
rl_buffer_ring *rl_buffer_ring_register(rl_ring *ring, unsigned short group, unsigned int count, int *error);
/// Hands buffer `id` (at `address`, `length` bytes) to the kernel again. One thread at a time.
void rl_buffer_ring_give(rl_buffer_ring *buffers, void *address, unsigned int length, unsigned short id);
/// A receive into a buffer of `group` (IOSQE_BUFFER_SELECT), multishot (IORING_RECV_MULTISHOT,
/// Linux 6.0) or not: each completion with bytes carries IORING_CQE_F_BUFFER and the
/// buffer's id in its upper 16 flag bits.
int rl_ring_prep_recv_provided(rl_ring *ring, int fd, unsigned short group, int multishot,
                               unsigned long long user_data);
/// Empties a message header for reuse: no buffers, no control data.
void rl_message_reset(rl_message *message);
/// IORING_CQE_F_BUFFER and IORING_CQE_BUFFER_SHIFT.
#define RL_CQE_F_BUFFER (1U << 0)
#define RL_CQE_BUFFER_SHIFT 16

// MARK: Boards and placement (ringlet_board.c)

/// Reads up to `capacity` bytes of the regular file at `path` into `buffer` (open(2)
/// with O_NONBLOCK + read(2) until end of file or `capacity`, retrying EINTR); never
/// blocks. Returns the bytes read, or -errno (-ENOENT: no such file), or, for what is
/// not a regular file (a FIFO, device, directory or socket; sysfs and /proc entries
/// are regular), -(RL_NOT_REGULAR_FILE + its type): see RL_FILE_TYPE_*. A return of
/// `capacity` may mean the file is longer.
long long rl_read_file(const char *path, unsigned char *buffer, long long capacity);
/// Above every errno: rl_read_file's refusal of a file that is not regular.
#define RL_NOT_REGULAR_FILE 0x10000
/// File types (st_mode's S_IFMT >> 12, as the kernel defines them).
#define RL_FILE_TYPE_FIFO 1
#define RL_FILE_TYPE_CHARACTER_DEVICE 2
#define RL_FILE_TYPE_DIRECTORY 4
#define RL_FILE_TYPE_BLOCK_DEVICE 6
#define RL_FILE_TYPE_SYMBOLIC_LINK 10
#define RL_FILE_TYPE_SOCKET 12
/// Physical memory in bytes (sysconf _SC_PHYS_PAGES × _SC_PAGESIZE), or -errno.
long long rl_memory_bytes(void);
/// The page size in bytes (sysconf _SC_PAGESIZE).
long long rl_page_bytes(void);
/// Writes the running kernel's release (uname(2), e.g. "6.1.0-18-arm64") into
/// `buffer`, NUL-terminated and truncated to `capacity`. 0 or -errno.
int rl_kernel_release(char *buffer, int capacity);
/// Pins the calling thread to the `count` CPUs in `cpus` (sched_setaffinity(2)).
/// 0 or -errno (-EINVAL: none of them is online or allowed by the cpuset).
int rl_thread_set_affinity(const int *cpus, int count);
/// The CPUs thread `tid` may run on (sched_getaffinity(2)), at most `capacity` of
/// them in ascending order; their count, or -errno.
int rl_thread_get_affinity(int tid, int *cpus, int capacity);
/// Whether io_uring_setup(2) accepts `flags` (RL_RING_*): 1 yes, 0 no (EINVAL), or
/// -errno when io_uring itself is refused.
int rl_uring_setup_flags_supported(unsigned int flags);
/// The io_uring operations the runtime uses, for reports: their count, and for
/// index `i` a static name with the Linux version that added it, whether the runtime
/// works without it (1: optional, 0: the manager refuses the ring without it), and
/// whether this kernel's probe has it (1), lacks it (0), or cannot tell (-errno;
/// kernels < 5.6 have no probe).
int rl_uring_used_opcode_count(void);
const char *rl_uring_used_opcode_name(int i);
int rl_uring_used_opcode_optional(int i);
int rl_uring_used_opcode_supported(int i);

#ifdef __cplusplus
}
#endif
#endif
