// ringlet_test_support.h — what the tests and the checks program use to set up the
// situations they check: pipes and raw reads and writes, a child process that exits,
// signals sent on cue, a file removed, a plain sleep. Not part of the runtime (which
// never links it): the production header, Sources/CRinglet/include/ringlet.h, holds
// only what the runtime calls. Fixed-width types only, as there, so the checks
// program builds in Embedded Swift mode.
#ifndef RINGLET_TEST_SUPPORT_H
#define RINGLET_TEST_SUPPORT_H

#ifdef __cplusplus
extern "C" {
#endif

/// read(2)/write(2) retried on EINTR: bytes moved or -errno.
long long rl_fd_read(int fd, void *buffer, unsigned long long length);
long long rl_fd_write(int fd, const void *buffer, unsigned long long length);
/// pipe2(2) with O_CLOEXEC (and O_NONBLOCK when asked): fds[0] reads, fds[1] writes.
int rl_pipe(int fds[2], int nonblocking);
/// unlink(2). 0 or -errno.
int rl_unlink(const char *path);
/// 1 when this program runs under ThreadSanitizer or AddressSanitizer (their runtime is
/// linked in), else 0: the tests then allow instrumented code more time and skip
/// resident-memory measurements, which would count the sanitizer's shadow memory.
int rl_test_sanitizer_active(void);
/// 1 when ThreadSanitizer instruments this run.
int rl_test_thread_sanitizer_active(void);
/// Under AddressSanitizer: frames from now on stay on the thread's stack, and threads
/// that have none yet get no fake stack (a mapping of about 11 MB each, made on the
/// thread's first instrumented call), for a test that leaves the process little
/// address space. Stack-use-after-return is then not detected. No effect otherwise.
void rl_test_address_sanitizer_stop_fake_stacks(void);
/// Defined by the test module (weak here): called when a sanitizer ends the process
/// (a leak found at exit, an error, its own allocation refused), after its report is
/// written and before the process exits with the sanitizer's exit code. A
/// constructor installs it as the sanitizer's death callback.
void rl_test_report_sanitizer_death(void) __attribute__((weak));
/// The calling thread's timer slack in nanoseconds (prctl PR_GET_TIMERSLACK).
long long rl_test_timer_slack_ns(void);
/// Sets the calling thread's timer slack (0: back to its default). 0 or -errno.
int rl_test_set_timer_slack_ns(unsigned long long slack);

/// Forks a child that sleeps `delay_ns` then exits with `status`; its pid or -errno.
int rl_process_spawn_exit(int status, long long delay_ns);
/// Starts `path` with one argument in a child process (fork and execv); its pid or
/// -errno (a failed exec exits 127).
int rl_process_spawn_program(const char *path, const char *argument);
/// The same with the child's stderr written to the file at `stderr_path` (created or
/// truncated); a failed redirection exits 126.
int rl_process_spawn_program_capturing(const char *path, const char *argument, const char *stderr_path);
/// The same with `assignment` ("NAME=value") added to the child's environment, which
/// is built before the fork (nothing allocates in the child).
int rl_process_spawn_program_with_env(const char *path, const char *argument, const char *assignment);
/// A memory squeeze that makes the kernel count memory stalls (PSI) on a machine with a
/// cgroup v1 memory controller: makes the cgroup `cgroup_dir` (under
/// /sys/fs/cgroup/memory) with a limit of `limit_bytes`, and starts a child in it that
/// holds `hold_bytes` of anonymous memory, writes a file of `file_bytes` at `file_path`
/// (its page cache charged to the cgroup) and reads it again and again: the reads find
/// their pages reclaimed, and the reclaim in the cgroup's charges is a memory stall.
/// Returns the child's pid (kill it to end the squeeze), or -errno when the cgroup
/// cannot be made (not root, no v1 memory controller). The child exits 0 after
/// `seconds`.
/// Drops capability `capability` (CAP_SYS_RESOURCE is 24) from the calling thread's
/// effective and permitted sets (capset(2)); threads it creates afterwards inherit the
/// loss. 0 or -errno.
int rl_drop_capability(int capability);
int rl_memory_squeeze(const char *cgroup_dir, long long limit_bytes, long long hold_bytes,
                      const char *file_path, long long file_bytes, int seconds);
/// The path of the running executable (/proc/self/exe) into `buffer`: its length or -errno.
long long rl_self_executable(char *buffer, unsigned long long size);
/// Waits for child `pid`; its exit status (128 + signal when killed) or -errno.
int rl_process_reap(int pid);
/// The same, for at most `timeout_ms`: a child still running then is killed (SIGKILL)
/// and -ETIMEDOUT returned.
int rl_process_reap_within(int pid, long long timeout_ms);

/// kill(getpid(), signo) and tgkill(getpid(), tid, signo). 0 or -errno.
int rl_signal_send(int signo);
int rl_signal_send_thread(int tid, int signo);
/// Blocks (block != 0) or unblocks `signo` in the calling thread. 0 or -errno.
int rl_signal_block_in_thread(int signo, int block);

/// Opens a pseudo-terminal pair (posix_openpt(3), close-on-exec): a character device
/// that, unlike a pipe, cannot promise RWF_NOWAIT. 0 or -errno.
int rl_pty_open(int *master, int *slave);

/// Sleeps for `ns` nanoseconds (nanosleep(2), resumed after EINTR): blocking the
/// thread in the kernel, which the runtime cannot see.
void rl_sleep_ns(long long ns);

/// The CPU the calling thread runs on now (sched_getcpu(3)), or -errno.
int rl_test_current_cpu(void);
/// The calling thread's CPU affinity (sched_getaffinity(2)) as a mask of CPUs 0...63,
/// or 0 when it cannot be read.
unsigned long long rl_test_affinity_mask(void);
/// The ids of this process's threads (/proc/self/task): writes at most `capacity` of
/// them to `ids` and returns how many there are (more than `capacity`: call again with
/// room for them), or -errno. Thread-count tests compare sets of ids, not counts: a
/// thread of the test harness that ends meanwhile would change a count.
int rl_test_thread_ids(int *ids, int capacity);
/// Pins every thread of the process to the first CPU it may run on (sched_setaffinity(2)
/// for each entry of /proc/self/task): the number of threads pinned, or -errno.
int rl_test_pin_process_to_one_cpu(void);
/// getenv(3): the value of the environment variable `name`, or NULL when unset.
const char *rl_test_environment(const char *name);

/// The usable size of a heap block (malloc_usable_size(3)): what an object really costs.
unsigned long long rl_test_heap_block_bytes(void *block);

/// How many malloc arenas the C library has made (the heaps glibc's malloc_info(3)
/// lists); -1 where it cannot say.
int rl_test_malloc_arenas(void);

/// The VmFlags line of /proc/self/smaps for the mapping that holds `address` (the
/// flags, space-separated, e.g. "rd wr mr mw me ac nh"), copied into `out`; 0 when
/// found, -1 when smaps is unreadable or no mapping holds the address.
int rl_test_vm_flags(const void *address, char *out, int capacity);

#ifdef __cplusplus
}
#endif
#endif
