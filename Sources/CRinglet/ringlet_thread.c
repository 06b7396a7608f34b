// ringlet_thread.c — futexes, clocks, threads and thread priority: the syscalls the
// scheduler needs. Each wrapper retries EINTR where the caller cannot act on it and
// returns -errno otherwise; see include/ringlet.h for the contracts.
#include "ringlet.h"
#include "ringlet_internal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int rl_futex_wait(unsigned int *word, unsigned int expected, long long timeout_ns) {
    struct timespec ts, *tsp = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000LL);
        ts.tv_nsec = (long)(timeout_ns % 1000000000LL);
        tsp = &ts;
    }
    long r = syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, tsp, NULL, 0);
    return r == 0 ? 0 : -errno;
}

void rl_thread_yield(void) { sched_yield(); }

int rl_futex_wake(unsigned int *word, int count) {
    long r = syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
    return r < 0 ? -errno : (int)r;
}

int rl_event_wake(unsigned int *word, int count) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    unsigned int in_epoll = __atomic_load_n(word + 1, __ATOMIC_RELAXED);
    if (in_epoll != 0) return rl_eventfd_signal((int)in_epoll - 1) == 0 ? 1 : 0;
    return rl_futex_wake(word, count);
}

int rl_event_sleeps_in_epoll(unsigned int *word) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return __atomic_load_n(word + 1, __ATOMIC_RELAXED) != 0;
}

void rl_event_sleep_in_epoll(unsigned int *word, int eventfd) {
    __atomic_store_n(word + 1, eventfd >= 0 ? (unsigned int)eventfd + 1 : 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

unsigned long long rl_clock_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

long long rl_clock_realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + (long long)ts.tv_nsec;
}

int rl_sleep_until_monotonic_ns(unsigned long long deadline_ns) {
    struct timespec ts = { .tv_sec = (time_t)(deadline_ns / 1000000000ULL),
                           .tv_nsec = (long)(deadline_ns % 1000000000ULL) };
    // The thread's timer slack (50 us by default) lets the kernel end a sleep that much
    // late to batch wake-ups: for the few hundred microseconds this sleep lasts, none.
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    int r;
    do { r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL); } while (r == EINTR);
    // 0 puts back the thread's default slack, the one it was created with (Ringlet
    // changes it nowhere else), without a PR_GET_TIMERSLACK call before the sleep.
    prctl(PR_SET_TIMERSLACK, 0UL, 0, 0, 0);
    return -r;
}

int rl_nap_ns(unsigned long long ns) {
    struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL), .tv_nsec = (long)(ns % 1000000000ULL) };
    return nanosleep(&ts, NULL) == 0 ? 0 : -errno;
}

struct rl_thread_start_args {
    rl_thread_entry entry;
    void *context;
};

static void *rl_thread_trampoline(void *raw) {
    struct rl_thread_start_args args = *(struct rl_thread_start_args *)raw;
    free(raw);
    // Ringlet's threads leave asynchronous signals to the program's threads (or to
    // the manager's signalfd), as libdispatch's workers do.
    rl_signal_block_asynchronous();
    rl_stack_guard_thread_begin();
    args.entry(args.context);
    rl_stack_guard_thread_end();
    return NULL;
}

int rl_thread_start(rl_thread_entry entry, void *context, unsigned long long stack_bytes) {
    struct rl_thread_start_args *args = malloc(sizeof *args);
    if (!args) return -ENOMEM;
    args->entry = entry;
    args->context = context;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (stack_bytes > 0) {
        // The C library refuses a stack below its minimum with EINVAL, and the minimum
        // is per architecture: 16 KiB on x86-64 glibc, 128 KiB on aarch64 (64 KiB pages
        // are possible there). A smaller request gets the minimum: only the touched
        // pages of a stack are memory, so this costs address space, not RSS.
        long minimum = sysconf(_SC_THREAD_STACK_MIN);
        if (minimum > 0 && stack_bytes < (unsigned long long)minimum) stack_bytes = (unsigned long long)minimum;
        int r = pthread_attr_setstacksize(&attr, (size_t)stack_bytes);
        if (r != 0) { pthread_attr_destroy(&attr); free(args); return -r; }
    }
    pthread_t thread;
    int r = pthread_create(&thread, &attr, rl_thread_trampoline, args);
    pthread_attr_destroy(&attr);
    if (r != 0) { free(args); return -r; }
    return 0;
}

int rl_resource_limit(int resource, unsigned long long *soft, unsigned long long *hard) {
    int which;
    switch (resource) {
    case RL_LIMIT_ADDRESS_SPACE: which = RLIMIT_AS; break;
    case RL_LIMIT_THREADS: which = RLIMIT_NPROC; break;
    case RL_LIMIT_OPEN_FILES: which = RLIMIT_NOFILE; break;
    case RL_LIMIT_STACK: which = RLIMIT_STACK; break;
    default: return -EINVAL;
    }
    struct rlimit limit;
    if (getrlimit(which, &limit) != 0) return -errno;
    *soft = limit.rlim_cur == RLIM_INFINITY ? ~0ULL : (unsigned long long)limit.rlim_cur;
    *hard = limit.rlim_max == RLIM_INFINITY ? ~0ULL : (unsigned long long)limit.rlim_max;
    return 0;
}

int rl_thread_block_pipe_signal(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    return -pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int rl_thread_take_pipe_signal(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    struct timespec now = { 0, 0 };
    for (;;) {
        int r = sigtimedwait(&set, NULL, &now);
        if (r == SIGPIPE) return 1;
        if (r < 0 && errno == EINTR) continue;
        return 0;  // EAGAIN: none pending
    }
}

int rl_thread_id(void) { return (int)syscall(SYS_gettid); }
int rl_process_id(void) { return (int)getpid(); }

void rl_thread_set_name(const char *name) {
    char buf[16];
    strncpy(buf, name, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    prctl(PR_SET_NAME, buf, 0, 0, 0);
}

int rl_thread_set_nice(int nice) {
    // On Linux, PRIO_PROCESS with a tid sets the priority of that one thread
    // (setpriority(2), BUGS: "the nice value is a per-thread attribute").
    return setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice) == 0 ? 0 : -errno;
}

int rl_thread_set_sched_idle(void) {
    struct sched_param param = { .sched_priority = 0 };
    return sched_setscheduler(0, SCHED_IDLE, &param) == 0 ? 0 : -errno;
}

int rl_thread_get_nice(int *is_idle) {
    *is_idle = sched_getscheduler(0) == SCHED_IDLE;
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    return nice;
}

int rl_cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

int rl_process_thread_count(void) {
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return -errno;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] != '.') count++;
    }
    closedir(dir);
    return count;
}

int rl_thread_cpu_clock(int *clock) {
    clockid_t id;
    int r = pthread_getcpuclockid(pthread_self(), &id);
    if (r != 0) return -r;
    *clock = (int)id;
    return 0;
}

long long rl_thread_cpu_ns(int clock) {
    struct timespec ts;
    if (clock_gettime((clockid_t)clock, &ts) != 0) return -errno;
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int rl_thread_state(int tid) {
    char path[64], buf[512], digits[21];
    rl_join(path, sizeof path, "/proc/self/task/", rl_decimal(digits, tid), "/stat");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int e = errno;
    close(fd);
    if (n <= 0) return n < 0 ? -e : -EIO;
    buf[n] = 0;
    // "tid (comm) S ...": the name may hold spaces and parentheses; the state
    // follows the last ')'.
    char *close_paren = strrchr(buf, ')');
    if (!close_paren || close_paren[1] != ' ' || !close_paren[2]) return -EIO;
    return (unsigned char)close_paren[2];
}

/// The count after a /proc status key ("\t<digits>"); strtoll(3) would consult the
/// locale's character tables, which a static program otherwise leaves untouched.
static long long rl_count_after(const char *text) {
    while (*text == ' ' || *text == '\t') text++;
    long long value = 0;
    while (*text >= '0' && *text <= '9') value = value * 10 + (*text++ - '0');
    return value;
}

static long long rl_read_switches(const char *task, const char *name_prefix, int voluntary_only) {
    char path[96], buf[4096];
    rl_join(path, sizeof path, "/proc/self/task/", task, "/status");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;  // the thread exited meanwhile
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    const char *name = strstr(buf, "Name:\t");
    if (!name || strncmp(name + 6, name_prefix, strlen(name_prefix)) != 0) return 0;
    long long total = 0;
    const char *v = strstr(buf, "\nvoluntary_ctxt_switches:");
    const char *nv = strstr(buf, "\nnonvoluntary_ctxt_switches:");
    if (v) total += rl_count_after(v + 26);
    if (nv && !voluntary_only) total += rl_count_after(nv + 29);
    return total;
}

static long long rl_sum_switches(const char *name_prefix, int voluntary_only) {
    DIR *dir = opendir("/proc/self/task");
    if (!dir) return -errno;
    long long total = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] != '.') total += rl_read_switches(entry->d_name, name_prefix, voluntary_only);
    }
    closedir(dir);
    return total;
}

long long rl_context_switches(const char *name_prefix) { return rl_sum_switches(name_prefix, 0); }

long long rl_voluntary_context_switches(const char *name_prefix) { return rl_sum_switches(name_prefix, 1); }

__thread void *rl_tls_context;
static pthread_key_t rl_tls_key;
static pthread_once_t rl_tls_once = PTHREAD_ONCE_INIT;
static rl_tls_release_fn rl_tls_release;

static void rl_tls_destructor(void *context) {
    rl_tls_release_fn release = __atomic_load_n(&rl_tls_release, __ATOMIC_ACQUIRE);
    // Clear the slot first: Ringlet code run by a later destructor of this thread
    // then makes a fresh context instead of using the released one.
    rl_tls_context = NULL;
    if (context && release) release(context);
}
static void rl_tls_make_key(void) { pthread_key_create(&rl_tls_key, rl_tls_destructor); }

void rl_tls_set(void *context) {
    rl_tls_context = context;
    pthread_once(&rl_tls_once, rl_tls_make_key);
    pthread_setspecific(rl_tls_key, context);
}

void rl_tls_set_release(rl_tls_release_fn release) {
    __atomic_store_n(&rl_tls_release, release, __ATOMIC_RELEASE);
}
