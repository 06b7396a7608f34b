// ringlet_internal.h — what the C files of the boundary share with each other and
// Swift never calls (so it is not in include/ringlet.h).
#ifndef RINGLET_INTERNAL_H
#define RINGLET_INTERNAL_H

/// Blocks every asynchronous signal in the calling thread (Ringlet's own threads),
/// so that signals go to the program's threads or stay pending for a signalfd.
void rl_signal_block_asynchronous(void);

#endif
