#!/bin/sh
# The functions a static program runs, in the order it first runs them, for the front of
# its symbol ordering (`make cross`, after Boards/static-order.sh's list is linked once):
#   Boards/traced-order.sh <qemu-user binary> <cpu> <nm> <program, unstripped> > traced.txt
# runs the program once under qemu's user-mode emulator, which logs each block of code it
# translates with the function it lies in (-d exec), and prints those functions, then the
# ones the board's kernel reaches and the emulator cannot:
#   - the io_uring path (liburing, the C boundary's ring calls, its io_uring_disabled
#     sysctl read and its close(2) of the probe's descriptors): qemu-user has no
#     io_uring, so the traced run is on epoll (RINGLET_BACKEND=epoll);
#   - a worker's blocking wait (Scheduler.workerWillBlock, workerDidUnblock, WaitReason):
#     on the board a worker's sync or wait finds the other side busy now and then; under
#     qemu-user, which runs the threads far slower, it never did in any run;
#   - the program's own functions, and the copies of DispatchQueue.runHolding made for
#     its sync calls: where a sync waited for the queue, its closure runs out of line;
#   - glibc's lookup of the vDSO's clock functions (qemu-user 7.2 maps no vDSO);
#   - the check whether standard output is a terminal (the board's console is one);
#   - crtbegin's start-up functions, which have no size, so qemu names no block with them;
#   - the machine outliner's pieces (OUTLINED_FUNCTION_<n>, 11 kB in all, about half of it
#     run under qemu-user): the ring path calls some the traced run does not, and their
#     numbers change from one build to the next, so only all of them can be named;
#   - the choice of backend, which the board makes one way and the traced run the other;
#   - the growing and freeing of arrays' storage (5.6 kB in all, half of it traced): how
#     many timers the manager holds at once, for one, differs from run to run;
#   - the destroy functions of closure contexts (objectdestroy.<n>; the Makefile gives
#     them a name), of which the board's run may free some the traced run keeps.
# A function the board runs on a path the traced run does not take (placement on a
# profile's cores, a race won the other way) falls among the rest of the code, at the end
# of .text, and costs the window of pages it lies in (.init and .iplt, which every run
# reads, are in front: Boards/start-code-first.ld).
# Why it matters: the kernel maps a file's pages 64 KiB around each fault, so code that
# runs spread among code that never runs makes all of it resident. With the functions
# that run in one block (and no unwind tables, Boards/no-unwind-tables.ld), the static
# demo's resident read-only pages on the Pi 5's 16 KiB pages went from 608-640 kB to
# 464-528 kB (the BoardProfiles article, "Size"). A function missing from the list costs
# memory, never behaviour: the order changes nothing but addresses.
set -eu
qemu=$1 cpu=$2 nm=$3 program=$4
# The program's module (RingletDemo-untraced: RingletDemo), as its symbols begin: $e11RingletDemo.
module=$(basename "$program"); module=${module%%-*}; module="\$e${#module}$module"
log=$(mktemp) out=$(mktemp) ran=$(mktemp)
trap 'rm -f "$log" "$out" "$ran"' EXIT
if ! RINGLET_BACKEND=epoll "$qemu" -cpu "$cpu" -d exec -D "$log" "$program" > "$out" 2>&1; then
    echo "traced-order: $program failed under $qemu:" >&2; cat "$out" >&2; exit 1
fi
# "Trace 0: <host> [<flags>/<pc>/<flags>/<flags>] <function>": the functions that ran,
# printed in the program's own address order, not in the order they first ran, which
# changes with the threads' timing from one build to the next.
awk '/^Trace / && NF == 5 { print $5 }' "$log" | sort -u > "$ran"
"$nm" -n --defined-only "$program" | awk 'NR == FNR { ran[$1] = 1; next } ($3 in ran) && !seen[$3]++ { print $3 }' "$ran" -
"$nm" --defined-only "$program" | awk -v module="$module" '
    $3 ~ /^(_*io_uring_|rl_ring_|rl_uring_|rl_close$)/ { print $3 }
    $3 ~ /9SchedulerC(15workerWillBlock|16workerDidUnblock)|10WaitReasonO|13DispatchQueueC10runHolding/ { print $3 }
    $2 ~ /^[tT]$/ && index($3, module) == 1 { print $3 }
    $3 ~ /^(_dl_lookup_symbol_x|_dl_lookup_direct|_dl_new_object|_dl_setup_hash|_dl_add_to_namespace_list|strcmp)$/ { print $3 }
    $3 ~ /^(isatty|tcgetattr|frame_dummy)$/ { print $3 }
    $3 ~ /^(OUTLINED_FUNCTION_[0-9]+|objectdestroy(\.[0-9]+)*)$/ || $3 ~ /16BackendSelectionV/ { print $3 }
    $3 ~ /ContiguousArrayStorageCfD|ContiguousArrayBufferV20_consumeAndCreateNew/ { print $3 }'
