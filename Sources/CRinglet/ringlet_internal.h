// ringlet_internal.h — what the C files of the boundary share with each other and
// Swift never calls (so it is not in include/ringlet.h).
#ifndef RINGLET_INTERNAL_H
#define RINGLET_INTERNAL_H

/// Blocks every asynchronous signal in the calling thread (Ringlet's own threads),
/// so that signals go to the program's threads or stay pending for a signalfd.
void rl_signal_block_asynchronous(void);
// An alternate signal stack and the stack's bounds for the stack guard
// (ringlet_stack_guard.c), at a Ringlet thread's start and end.
void rl_stack_guard_thread_begin(void);
void rl_stack_guard_thread_end(void);

/// The decimal digits of `value` in `digits` (21 bytes), returned; and `a`, `b` and `c`
/// joined into `out` (cut to `capacity` - 1 bytes). For the /proc paths the boundary
/// builds at run time: snprintf(3) would run printf's machinery, whose code in a static
/// program otherwise stays untouched on disk (ringlet_process.c).
const char *rl_decimal(char digits[21], long long value);
void rl_join(char *out, unsigned long capacity, const char *a, const char *b, const char *c);

/// IORING_OP_FUTEX_WAKE (Linux 6.7), which liburing before 2.5 does not name: queued by
/// the manager (ringlet_uring.c), listed by `ringlet board` (ringlet_board.c).
enum { RL_IORING_OP_FUTEX_WAKE = 52 };

#endif
