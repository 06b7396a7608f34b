// ringlet_stack_guard.c — a thread of Ringlet's that runs out of stack says so.
//
// Each thread rl_thread_start creates gets an alternate signal stack, and a handler
// for SIGSEGV and SIGBUS (installed once, by rl_stack_guard_install) looks at where
// the thread's stack pointer is: below the bottom of a Ringlet thread's stack (or a
// fault in the page at its bottom or in the guard below it) is an overflow. The
// handler writes what ran out — the thread, the queue whose item it ran (through the
// runtime's callback), the stack's size and the key that sets it — then puts the
// program's previous action back and returns: the faulting instruction runs again
// and faults again, into that action (Swift's backtracer, a sanitizer, or the default
// that ends the process), as it would have without Ringlet. Everything here is
// async-signal-safe: write(2), prctl(2), a fixed buffer, and the callback, which
// copies a label without allocating.
#include "ringlet.h"
#include "ringlet_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#include <pthread.h>

// Under AddressSanitizer or ThreadSanitizer the sanitizer owns SIGSEGV, the alternate
// stacks and the report of an overflow: the guard stands aside.
#if defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#    define RL_STACK_GUARD_OFF 1
#  endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#  define RL_STACK_GUARD_OFF 1
#endif

// The alternate stack: room for this handler and for the action it hands the fault
// on to (AddressSanitizer's handler needs about 32 KiB).
#define RL_ALTERNATE_STACK_BYTES (64 * 1024)

static __thread uintptr_t rl_stack_low;   // the lowest usable address of the thread's stack
static __thread uintptr_t rl_stack_bytes; // 0: not a thread of Ringlet's
static __thread void *rl_alternate_stack;
static __thread stack_t rl_previous_stack; // the one in place before ours (a sanitizer's)

static rl_stack_label_writer rl_label_writer;
static struct sigaction rl_fault_previous[2];
static int rl_fault_installed;

void rl_stack_guard_thread_begin(void) {
#ifdef RL_STACK_GUARD_OFF
    return;
#endif
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    void *low = NULL;
    size_t size = 0;
    int r = pthread_attr_getstack(&attr, &low, &size);
    pthread_attr_destroy(&attr);
    if (r != 0) return;
    void *alternate = mmap(NULL, RL_ALTERNATE_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (alternate == MAP_FAILED) return;
    stack_t stack = { .ss_sp = alternate, .ss_size = RL_ALTERNATE_STACK_BYTES, .ss_flags = 0 };
    if (sigaltstack(&stack, &rl_previous_stack) != 0) {
        munmap(alternate, RL_ALTERNATE_STACK_BYTES);
        return;
    }
    rl_alternate_stack = alternate;
    rl_stack_low = (uintptr_t)low;
    rl_stack_bytes = (uintptr_t)size;
}

void rl_stack_guard_thread_end(void) {
    if (!rl_alternate_stack) return;
    // The stack in place before ours comes back (or none): AddressSanitizer unmaps, at
    // the thread's exit, the alternate stack it finds, with the size it finds; finding
    // none, it failed to unmap address 0 and ended the process.
    stack_t previous = rl_previous_stack;
    if (previous.ss_flags & SS_DISABLE) {
        previous.ss_sp = NULL;
        previous.ss_size = 0;
        previous.ss_flags = SS_DISABLE;
    }
    sigaltstack(&previous, NULL);
    munmap(rl_alternate_stack, RL_ALTERNATE_STACK_BYTES);
    rl_alternate_stack = NULL;
    rl_stack_bytes = 0;
}

static uintptr_t rl_stack_pointer(void *context) {
    ucontext_t *uc = context;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.sp;
#elif defined(__arm__)
    return (uintptr_t)uc->uc_mcontext.arm_sp;
#elif defined(__riscv)
    return (uintptr_t)uc->uc_mcontext.__gregs[2];
#else
    (void)uc;
    return 0;
#endif
}

// Whether the fault is the thread's stack running out: the stack pointer is below
// the stack's bottom or within its last page, or the fault is in that page or in
// the 64 KiB below it (the guard, and what a large frame skips into).
static int rl_is_overflow(const siginfo_t *info, void *context) {
    if (rl_stack_bytes == 0) return 0;
    uintptr_t page = 4096;
    uintptr_t sp = rl_stack_pointer(context);
    if (sp != 0 && sp < rl_stack_low + page) return 1;
    uintptr_t fault = (uintptr_t)info->si_addr;
    return fault < rl_stack_low + page && fault + 64 * 1024 >= rl_stack_low;
}

struct rl_text { char bytes[768]; size_t used; };

static void rl_text_add(struct rl_text *text, const char *s, size_t n) {
    size_t room = sizeof text->bytes - text->used;
    if (n > room) n = room;
    memcpy(text->bytes + text->used, s, n);
    text->used += n;
}

static void rl_text_string(struct rl_text *text, const char *s) { rl_text_add(text, s, strlen(s)); }

static void rl_text_number(struct rl_text *text, unsigned long long value) {
    char digits[24];
    size_t n = 0;
    do { digits[sizeof digits - 1 - n++] = (char)('0' + value % 10); value /= 10; } while (value && n < sizeof digits);
    rl_text_add(text, digits + sizeof digits - n, n);
}

static void rl_report_overflow(void) {
    struct rl_text text = { .used = 0 };
    char name[17] = { 0 };
    prctl(PR_GET_NAME, name, 0, 0, 0);
    rl_text_string(&text, "Ringlet: stack overflow: thread '");
    rl_text_string(&text, name);
    rl_text_string(&text, "' (tid ");
    rl_text_number(&text, (unsigned long long)syscall(SYS_gettid));
    rl_text_string(&text, ") ran out of its ");
    rl_text_number(&text, (unsigned long long)rl_stack_bytes);
    rl_text_string(&text, "-byte stack");
    char label[256];
    size_t length = rl_label_writer ? rl_label_writer(label, sizeof label) : 0;
    if (length > 0) {
        rl_text_string(&text, " running an item of queue '");
        rl_text_add(&text, label, length);
        rl_text_string(&text, "'");
    }
    rl_text_string(&text, ". Every pool thread's stack is the board profile key 'workerStackBytes' "
                          "(RuntimeConfiguration.workerStackBytes); raise it, or move deep recursion and large "
                          "values off the stack (Dispatch's threads have 8 MiB).\n");
    const char *at = text.bytes;
    size_t left = text.used;
    while (left > 0) {
        ssize_t n = write(2, at, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        at += n;
        left -= (size_t)n;
    }
}

static void rl_fault_handler(int signo, siginfo_t *info, void *context) {
    int saved = errno;
    if (rl_is_overflow(info, context)) rl_report_overflow();
    // Hand the fault on: the previous action back; the instruction faults again. A
    // signal another process or thread sent (kill, raise, tgkill: si_code <= 0) is
    // not a fault that comes again: it is raised again, to be delivered on return.
    sigaction(signo, &rl_fault_previous[signo == SIGSEGV ? 0 : 1], NULL);
    if (info->si_code <= 0) raise(signo);
    errno = saved;
}

int rl_stack_guard_install(rl_stack_label_writer writer) {
#ifdef RL_STACK_GUARD_OFF
    (void)writer;
    return 0;
#endif
    if (__atomic_exchange_n(&rl_fault_installed, 1, __ATOMIC_ACQ_REL)) return 0;
    rl_label_writer = writer;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = rl_fault_handler;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSEGV, &action, &rl_fault_previous[0]) != 0) return -errno;
    if (sigaction(SIGBUS, &action, &rl_fault_previous[1]) != 0) return -errno;
    return 0;
}
