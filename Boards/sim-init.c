// sim-init.c — /init of the emulated board's initramfs (`make sim`).
//
// Mounts /proc, /sys and /dev (the runtime reads /proc/self/task for its statistics),
// takes /dev/console as stdin/stdout/stderr, says what machine the kernel sees (release,
// page size, CPUs and their cpu_capacity, memory, how long it took to boot), runs
// /ringlet-checks and then /ringlet-demo (static-pie and dynamic), reports each exit
// status and the demo's memory, and powers the machine off (qemu runs with -no-reboot
// and exits). The Makefile and Boards/sim-summary.sh grep these lines:
//   sim: kernel <release> <version>
//   sim: <n>-byte pages, <n> CPUs online, <n> MB of memory, cpu_capacity <a,b,...>
//   sim: /init started <s> s after the kernel did
//   sim: <program> exited with status <n>
//   sim: <program> peak RSS <n> kB, idle RSS <n> kB
//   sim: <program> idle RSS by mapping: ...
// Build: aarch64-linux-gnu-gcc -static -Os -o init sim-init.c
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/// Mounts a pseudo file system; a failure is reported, not fatal (the programs cope).
static void mount_pseudo(const char *type, const char *target) {
    mkdir(target, 0755);
    if (mount(type, target, type, 0, NULL) != 0 && errno != EBUSY)
        printf("sim: mount %s on %s: %s\n", type, target, strerror(errno));
}

/// The kB value of `key` ("Rss:") in /proc/<pid>/<file>, or -1.
static long proc_kilobytes(pid_t pid, const char *file_name, const char *key) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file_name);
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    long value = -1;
    while (fgets(line, sizeof line, file))
        if (strncmp(line, key, strlen(key)) == 0) { value = strtol(line + strlen(key), NULL, 10); break; }
    fclose(file);
    return value;
}

/// Where a process's resident memory sits, from /proc/<pid>/smaps: the program's own
/// file (its code and read-only data, and its writable data), the heap, the main
/// thread's stack, and anonymous mappings (thread stacks, the runtime's pools, malloc
/// arenas), grouped by their size: mappings of one size are mostly of one kind (every
/// pool thread's stack has the same size), so the groups say what the memory is for.
enum { size_groups = 8 };
struct rss_map {
    long binary_code, binary_data, heap, stack, anonymous, anonymous_count;
    long group_size[size_groups], group_count[size_groups], group_rss[size_groups];
    int groups;
    /// Which pages of the binary's read-only mappings (code and constants) are resident
    /// ('#') or not ('.'): for each mapping its file offset, ':', one character per page.
    char code_pages[4096];
};

/// Fills `out` with one character per page of [start, end): '#' when the page is
/// present in the page tables of `pid` (/proc/<pid>/pagemap, bit 63), else '.'.
static void resident_pages(pid_t pid, unsigned long start, unsigned long end, char *out, size_t size) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/pagemap", (int)pid);
    int fd = open(path, O_RDONLY);
    size_t count = 0;
    long page = sysconf(_SC_PAGESIZE);
    for (unsigned long address = start; fd >= 0 && address < end && count + 1 < size; address += page) {
        unsigned long long entry = 0;
        if (pread(fd, &entry, sizeof entry, (off_t)(address / page * sizeof entry)) != sizeof entry) break;
        out[count++] = (entry >> 63) & 1 ? '#' : '.';
    }
    out[count] = 0;
    if (fd >= 0) close(fd);
}

/// Fills `map` from /proc/<pid>/smaps; 0 on success, -1 when it cannot be read.
static int rss_by_mapping(pid_t pid, const char *program, struct rss_map *map) {
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
    FILE *file = fopen(path, "r");
    if (!file) return -1;
    memset(map, 0, sizeof *map);
    // A mapping's header line: "start-end perms offset dev inode [name]".
    enum { code, data, heap, stack, anonymous, other } kind = other;
    unsigned long start = 0, end = 0;
    while (fgets(line, sizeof line, file)) {
        char perms[8] = "", name[256] = "";
        unsigned long s, e, offset = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %255s", &s, &e, perms, &offset, name) >= 3 && strchr(line, '-') < strchr(line, ' ')) {
            start = s; end = e;
            if (strcmp(name, program) == 0) kind = perms[1] == 'w' ? data : code;
            else if (strcmp(name, "[heap]") == 0) kind = heap;
            else if (strcmp(name, "[stack]") == 0) kind = stack;
            else if (name[0] == 0) kind = anonymous;
            else kind = other;
            if (kind == code) {
                size_t used = strlen(map->code_pages);
                if (used + 32 < sizeof map->code_pages) {
                    used += snprintf(map->code_pages + used, sizeof map->code_pages - used, "%s%#lx:", used ? " " : "", offset);
                    resident_pages(pid, start, end, map->code_pages + used, sizeof map->code_pages - used);
                }
            }
            continue;
        }
        long kilobytes;
        if (sscanf(line, "Rss: %ld kB", &kilobytes) != 1) continue;
        switch (kind) {
        case code: map->binary_code += kilobytes; break;
        case data: map->binary_data += kilobytes; break;
        case heap: map->heap += kilobytes; break;
        case stack: map->stack += kilobytes; break;
        case anonymous:
            if (kilobytes == 0) break;
            map->anonymous += kilobytes;
            map->anonymous_count += 1;
            {
                long size = (long)((end - start) / 1024);
                int i = 0;
                while (i < map->groups && map->group_size[i] != size) i++;
                if (i == map->groups && map->groups < size_groups) map->group_size[map->groups++] = size;
                if (i == size_groups) map->group_size[i = size_groups - 1] = -1;  // the rest: "other sizes"
                map->group_count[i] += 1;
                map->group_rss[i] += kilobytes;
            }
            break;
        default: break;  // vdso, vvar: the kernel's, not the program's
        }
    }
    fclose(file);
    return 0;
}

/// 1 when the process `pid` has begun to exit (PF_EXITING in /proc/<pid>/stat, set by
/// do_exit() before the address space is torn down), or cannot be read; else 0.
static int is_exiting(pid_t pid) {
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *file = fopen(path, "r");
    if (!file) return 1;
    char *read = fgets(line, sizeof line, file);
    fclose(file);
    char *fields = read ? strrchr(line, ')') : NULL;  // the name may hold spaces
    unsigned int flags = 0;
    if (!fields || sscanf(fields + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) != 1) return 1;
    return (flags & 0x4) != 0;  // PF_EXITING, include/linux/sched.h
}

/// Runs `path` and returns its exit status (128 + signal when killed). With
/// `watch_memory`, samples its resident memory every 20 ms and reports the last sample
/// taken before it began to exit (inside the 300 ms the demo idles at its end; samples
/// during exit see the address space being torn down), and its peak (wait4's
/// ru_maxrss, VmHWM synced at exit, or the highest sample). Samples are `Rss:` of
/// smaps_rollup, counted from the page tables: status's VmRSS lags by up to 64 pages
/// per thread (SPLIT_RSS_COUNTING, mm/memory.c in 6.1) and read 4 kB for the idle demo.
/// `extra` is one more environment variable (or NULL); `label` names the run in the report.
static int run_as(const char *path, const char *label, char *extra, int watch_memory) {
    char *argv[] = { (char *)path, NULL };
    // The kernel hands init the command line's unknown NAME=value words as its
    // environment (Documentation/admin-guide/kernel-parameters.rst): the Makefile puts
    // RINGLET_BOARD=<board> there (so the programs run with the emulated board's
    // profile) unless the runtime is to detect the board, and RINGLET_EXPECT_BOARD=<board>
    // for the checks. Every RINGLET_ variable is passed on.
    extern char **environ;
    char *envp[16] = { "PATH=/", "HOME=/" };
    int count = 2;
    for (char **variable = environ; *variable && count < 14; variable++)
        if (strncmp(*variable, "RINGLET_", 8) == 0) envp[count++] = *variable;
    if (extra) envp[count++] = extra;
    envp[count] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { printf("sim: fork: %s\n", strerror(errno)); return 127; }
    if (pid == 0) {
        execve(path, argv, envp);
        printf("sim: exec %s: %s\n", path, strerror(errno));
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    long idle = -1, highest = -1;
    struct rss_map map, sample;
    int mapped = 0;
    for (;;) {
        pid_t done = wait4(pid, &status, watch_memory ? WNOHANG : 0, &usage);
        if (done == pid) break;
        if (done < 0 && errno != EINTR) { printf("sim: wait4: %s\n", strerror(errno)); return 127; }
        if (watch_memory) {
            // Read the flag after the RSS: not exiting then means not exiting at the read.
            long rss = proc_kilobytes(pid, "smaps_rollup", "Rss:");
            int have_map = rss_by_mapping(pid, path, &sample) == 0;
            if (rss > 0 && !is_exiting(pid)) {
                idle = rss;
                if (rss > highest) highest = rss;
                if (have_map) { map = sample; mapped = 1; }
            }
            usleep(20 * 1000);
        }
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    printf("sim: %s exited with status %d\n", label, code);
    // The peak is wait4's ru_maxrss (VmHWM) or the highest sample, whichever is larger:
    // since Linux 6.2 the RSS counters are per-CPU and VmHWM is updated from their
    // approximate sum, so on 6.12 ru_maxrss can read below the idle RSS.
    if (watch_memory)
        printf("sim: %s peak RSS %ld kB, idle RSS %ld kB\n", label,
               usage.ru_maxrss > highest ? usage.ru_maxrss : highest, idle);
    if (watch_memory && mapped) {
        printf("sim: %s idle RSS by mapping: binary %ld kB code + %ld kB data, heap %ld kB, main stack %ld kB, "
               "%ld anonymous mappings %ld kB (by size:", label, map.binary_code, map.binary_data, map.heap,
               map.stack, map.anonymous_count, map.anonymous);
        for (int i = 0; i < map.groups; i++) {
            if (map.group_size[i] < 0) printf(", %ld of other sizes: %ld kB", map.group_count[i], map.group_rss[i]);
            else printf("%s %ld of %ld kB: %ld kB", i ? "," : "", map.group_count[i], map.group_size[i], map.group_rss[i]);
        }
        printf("); libraries and the rest %ld kB\n",
               idle - map.binary_code - map.binary_data - map.heap - map.stack - map.anonymous);
        printf("sim: %s idle resident pages of the binary's read-only mappings (offset:pages, # resident): %s\n", label,
               map.code_pages);
    }
    return code;
}

static int run(const char *path, int watch_memory) { return run_as(path, path + 1, NULL, watch_memory); }

/// What the kernel says about the machine: its release and build (PREEMPT_RT shows
/// there), page size, CPUs, memory, each CPU's cpu_capacity (the values big.LITTLE
/// detection reads), and how long the kernel took to reach /init (/proc/uptime).
static void report_machine(void) {
    struct utsname names;
    if (uname(&names) == 0) printf("sim: kernel %s %s\n", names.release, names.version);
    char capacities[512] = "";
    size_t used = 0;
    for (int cpu = 0; cpu < 256; cpu++) {
        char path[64];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpu_capacity", cpu);
        FILE *file = fopen(path, "r");
        if (!file) break;
        long capacity = -1;
        if (fscanf(file, "%ld", &capacity) != 1) capacity = -1;
        fclose(file);
        used += snprintf(capacities + used, used < sizeof capacities ? sizeof capacities - used : 0, "%s%ld",
                         cpu ? "," : "", capacity);
        if (used >= sizeof capacities) break;
    }
    printf("sim: %ld-byte pages, %ld CPUs online, %ld MB of memory, cpu_capacity %s\n", sysconf(_SC_PAGESIZE),
           sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_PHYS_PAGES) * (sysconf(_SC_PAGESIZE) / 1024) / 1024,
           capacities[0] ? capacities : "(none)");
    FILE *uptime = fopen("/proc/uptime", "r");
    double seconds = -1;
    if (uptime) {
        if (fscanf(uptime, "%lf", &seconds) != 1) seconds = -1;
        fclose(uptime);
    }
    printf("sim: /init started %.2f s after the kernel did\n", seconds);
}

int main(void) {
    mount_pseudo("devtmpfs", "/dev");
    int console = open("/dev/console", O_RDWR);
    if (console >= 0) { dup2(console, 0); dup2(console, 1); dup2(console, 2); if (console > 2) close(console); }
    setvbuf(stdout, NULL, _IOLBF, 0);
    mount_pseudo("proc", "/proc");
    mount_pseudo("sysfs", "/sys");
    report_machine();
    // SIM_FAULT_AROUND (make sim SIM_FAULT_AROUND=4096): how much the kernel maps
    // around a faulting page of a file (debugfs), so that the resident pages reported
    // below are the ones the program touched.
    const char *fault_around = getenv("SIM_FAULT_AROUND");
    if (fault_around) {
        mount_pseudo("debugfs", "/sys/kernel/debug");
        FILE *knob = fopen("/sys/kernel/debug/fault_around_bytes", "w");
        int set = knob && fprintf(knob, "%s\n", fault_around) > 0;
        if (knob && fclose(knob) != 0) set = 0;
        printf("sim: fault_around_bytes %s%s\n", fault_around, set ? "" : " could not be set (no debugfs?)");
    }
    run("/ringlet-checks", 0);
    run("/ringlet-demo", 1);
    run("/ringlet-demo-dynamic", 1);  // the dynamically linked build, on /lib's glibc
    // As where io_uring is refused (a container's seccomp profile, io_uring_disabled):
    // the epoll backend and its I/O helper threads, whose small stacks the aarch64 C
    // library once refused, so that the runtime did not start there at all.
    run_as("/ringlet-checks", "ringlet-checks on epoll", "RINGLET_BACKEND=epoll", 0);
    run_as("/ringlet-demo", "ringlet-demo on epoll", "RINGLET_BACKEND=epoll", 0);
    printf("sim: powering off\n");
    fflush(stdout);
    sync();
    reboot(RB_POWER_OFF);
    return 0;  // not reached; were it, the kernel panics and panic=-1 ends qemu
}
