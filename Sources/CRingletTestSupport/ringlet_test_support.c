// ringlet_test_support.c — the helpers of ringlet_test_support.h.
#include "ringlet_test_support.h"
#include <sys/stat.h>

#include <errno.h>
#include <dirent.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

long long rl_fd_read(int fd, void *buffer, unsigned long long length) {
    for (;;) {
        ssize_t n = read(fd, buffer, (size_t)length);
        if (n >= 0) return n;
        if (errno != EINTR) return -errno;
    }
}

long long rl_fd_write(int fd, const void *buffer, unsigned long long length) {
    for (;;) {
        ssize_t n = write(fd, buffer, (size_t)length);
        if (n >= 0) return n;
        if (errno != EINTR) return -errno;
    }
}

int rl_pipe(int fds[2], int nonblocking) {
    return pipe2(fds, O_CLOEXEC | (nonblocking ? O_NONBLOCK : 0)) < 0 ? -errno : 0;
}

int rl_unlink(const char *path) { return unlink(path) < 0 ? -errno : 0; }

// Weak references: non-null only when a sanitizer's runtime is linked into the program.
extern void __tsan_init(void) __attribute__((weak));
extern void __asan_init(void) __attribute__((weak));

int rl_test_sanitizer_active(void) { return (__tsan_init != 0 || __asan_init != 0) ? 1 : 0; }
int rl_test_thread_sanitizer_active(void) { return __tsan_init != 0 ? 1 : 0; }

// AddressSanitizer's runtime switch for stack-use-after-return detection, read by
// instrumented code at each function entry.
extern int __asan_option_detect_stack_use_after_return __attribute__((weak));

void rl_test_address_sanitizer_stop_fake_stacks(void) {
    if (&__asan_option_detect_stack_use_after_return) __asan_option_detect_stack_use_after_return = 0;
}

// Common to the sanitizers' runtimes; weak, so that a plain build links.
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

// A child of an exit test writes its sanitizer report to log_path.<pid> and its
// stderr goes nowhere unless the test observes it; the parent then sees only an exit
// status. The test module's callback records the report as an issue, which reaches
// the parent's log.
static long rl_test_process_id;

static void rl_test_sanitizer_died(void) {
    // Not in the tracer LeakSanitizer clones to stop the world (another pid, every
    // thread of the process stopped, maybe holding the allocator's locks), nor in a
    // forked child.
    if (syscall(SYS_getpid) != rl_test_process_id) return;
    // A callback stuck on a lock the dying process holds ends it by SIGALRM, not a hang.
    alarm(10);
    rl_test_report_sanitizer_death();
}

__attribute__((constructor)) static void rl_test_install_sanitizer_death_callback(void) {
    if (!__sanitizer_set_death_callback || !rl_test_report_sanitizer_death) return;
    rl_test_process_id = syscall(SYS_getpid);
    __sanitizer_set_death_callback(rl_test_sanitizer_died);
}

long long rl_test_timer_slack_ns(void) { return prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0); }

int rl_test_set_timer_slack_ns(unsigned long long slack) {
    return prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0) == 0 ? 0 : -errno;
}

int rl_process_spawn_exit(int status, long long delay_ns) {
    pid_t pid = fork();
    if (pid < 0) return -errno;
    if (pid == 0) {
        if (delay_ns > 0) {
            struct timespec ts = { .tv_sec = delay_ns / 1000000000LL, .tv_nsec = delay_ns % 1000000000LL };
            while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
        }
        _exit(status);
    }
    return pid;
}

int rl_process_spawn_program(const char *path, const char *argument) {
    pid_t pid = fork();
    if (pid < 0) return -errno;
    if (pid == 0) {
        char *const argv[] = { (char *)path, (char *)argument, NULL };
        execv(path, argv);
        _exit(127);
    }
    return pid;
}

int rl_process_spawn_program_capturing(const char *path, const char *argument, const char *stderr_path) {
    pid_t pid = fork();
    if (pid < 0) return -errno;
    if (pid == 0) {
        int fd = open(stderr_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0) _exit(126);
        char *const argv[] = { (char *)path, (char *)argument, NULL };
        execv(path, argv);
        _exit(127);
    }
    return pid;
}

int rl_process_spawn_program_with_env(const char *path, const char *argument, const char *assignment) {
    extern char **environ;
    size_t count = 0;
    while (environ[count]) count++;
    char **envp = calloc(count + 2, sizeof(char *));
    if (!envp) return -ENOMEM;
    for (size_t i = 0; i < count; i++) envp[i] = environ[i];
    envp[count] = (char *)assignment;
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        free(envp);
        return -saved;
    }
    if (pid == 0) {
        char *const argv[] = { (char *)path, (char *)argument, NULL };
        execve(path, argv, envp);
        _exit(127);
    }
    free(envp);
    return pid;
}

long long rl_self_executable(char *buffer, unsigned long long size) {
    ssize_t length = readlink("/proc/self/exe", buffer, size);
    return length < 0 ? -errno : (long long)length;
}

int rl_process_reap(int pid) {
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, 0);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (r < 0 && errno != EINTR) return -errno;
    }
}

int rl_process_reap_within(int pid, long long timeout_ms) {
    int status = 0;
    for (long long waited = 0;; waited += 10) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (r < 0 && errno != EINTR) return -errno;
        if (waited >= timeout_ms) {
            kill(pid, SIGKILL);
            rl_process_reap(pid);
            return -ETIMEDOUT;
        }
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

int rl_signal_send(int signo) { return kill(getpid(), signo) < 0 ? -errno : 0; }

int rl_signal_send_thread(int tid, int signo) {
    return syscall(SYS_tgkill, getpid(), tid, signo) < 0 ? -errno : 0;
}

int rl_signal_block_in_thread(int signo, int block) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, signo);
    int r = pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
    return -r;
}

void rl_sleep_ns(long long ns) {
    struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000LL), .tv_nsec = (long)(ns % 1000000000LL) };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

int rl_test_current_cpu(void) {
    int cpu = sched_getcpu();
    return cpu < 0 ? -errno : cpu;
}

unsigned long long rl_test_affinity_mask(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;  // 0: the calling thread
    unsigned long long mask = 0;
    for (int cpu = 0; cpu < 64; cpu++)
        if (CPU_ISSET(cpu, &set)) mask |= 1ULL << cpu;
    return mask;
}

const char *rl_test_environment(const char *name) { return getenv(name); }

int rl_pty_open(int *master, int *slave) {
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (m < 0) return -errno;
    const char *name = NULL;
    if (grantpt(m) != 0 || unlockpt(m) != 0 || (name = ptsname(m)) == NULL) {
        int e = errno;
        close(m);
        return -e;
    }
    int s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (s < 0) {
        int e = errno;
        close(m);
        return -e;
    }
    *master = m;
    *slave = s;
    return 0;
}

int rl_test_pin_process_to_one_cpu(void) {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return -errno;
    int first = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &allowed)) { first = cpu; break; }
    if (first < 0) return -EINVAL;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    DIR *tasks = opendir("/proc/self/task");
    if (tasks == NULL) return -errno;
    int pinned = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        if (sched_setaffinity((pid_t)atoi(entry->d_name), sizeof one, &one) == 0) pinned++;
    }
    closedir(tasks);
    return pinned;
}

int rl_test_thread_ids(int *ids, int capacity) {
    DIR *tasks = opendir("/proc/self/task");
    if (tasks == NULL) return -errno;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        if (count < capacity) ids[count] = atoi(entry->d_name);
        count++;
    }
    closedir(tasks);
    return count;
}

unsigned long long rl_test_heap_block_bytes(void *block) { return malloc_usable_size(block); }

int rl_test_malloc_arenas(void) {
#if defined(__GLIBC__)
    char *text = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&text, &size);
    if (!stream) return -1;
    int failed = malloc_info(0, stream) != 0;
    fclose(stream);
    int count = 0;
    for (const char *at = text; !failed && at && (at = strstr(at, "<heap nr=")) != NULL; at++) count++;
    free(text);
    return failed ? -1 : count;
#else
    return -1;
#endif
}

int rl_test_vm_flags(const void *address, char *out, int capacity) {
    FILE *smaps = fopen("/proc/self/smaps", "r");
    if (!smaps || capacity < 1) { if (smaps) fclose(smaps); return -1; }
    char line[512];
    int inside = 0, found = -1;
    uintptr_t at = (uintptr_t)address;
    while (fgets(line, sizeof line, smaps)) {
        unsigned long start, end;
        // A mapping's first line: "<start>-<end> <perms> ..."; its fields follow.
        if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = at >= start && at < end;
        } else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            const char *flags = line + 8;
            while (*flags == ' ') flags++;
            snprintf(out, (size_t)capacity, "%s", flags);
            size_t length = strlen(out);
            if (length > 0 && out[length - 1] == '\n') out[length - 1] = 0;
            found = 0;
            break;
        }
    }
    fclose(smaps);
    return found;
}

static int rl_write_text(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int saved = errno;
    close(fd);
    return n < 0 ? -saved : 0;
}

int rl_memory_squeeze(const char *cgroup_dir, long long limit_bytes, long long hold_bytes,
                      const char *file_path, long long file_bytes, int seconds) {
    if (mkdir(cgroup_dir, 0755) != 0 && errno != EEXIST) return -errno;
    char path[512], text[64];
    snprintf(path, sizeof path, "%s/memory.limit_in_bytes", cgroup_dir);
    snprintf(text, sizeof text, "%lld", limit_bytes);
    int rc = rl_write_text(path, text);
    if (rc < 0) return rc;
    char procs[512];
    snprintf(procs, sizeof procs, "%s/cgroup.procs", cgroup_dir);
    pid_t pid = fork();
    if (pid < 0) return -errno;
    if (pid > 0) return pid;
    // The child: nothing here may depend on the parent's threads.
    snprintf(text, sizeof text, "%d", (int)getpid());
    if (rl_write_text(procs, text) < 0) _exit(2);
    char *hold = malloc((size_t)hold_bytes);
    if (!hold) _exit(3);
    for (long long i = 0; i < hold_bytes; i += 4096) hold[i] = 1;
    static char block[1 << 16];
    memset(block, 0x5a, sizeof block);
    int fd = open(file_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) _exit(4);
    for (long long written = 0; written < file_bytes; written += (long long)sizeof block) {
        if (write(fd, block, sizeof block) < 0) _exit(5);
    }
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        lseek(fd, 0, SEEK_SET);
        while (read(fd, block, sizeof block) > 0) {}
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < seconds);
    close(fd);
    unlink(file_path);
    _exit(hold[0] == 1 ? 0 : 6);
}

#include <linux/capability.h>

int rl_drop_capability(int capability) {
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &header, data) != 0) return -errno;
    int word = capability / 32;
    unsigned bit = 1u << (capability % 32);
    data[word].effective &= ~bit;
    data[word].permitted &= ~bit;
    data[word].inheritable &= ~bit;
    if (syscall(SYS_capset, &header, data) != 0) return -errno;
    return 0;
}
