/*
 * tresume — what every ptrace holder of ours does to a thread just before
 * it lets the thread go, so that the thread behaves as if we had never
 * stopped it.  inject/ptrace.c and core/tstop.c both call it.
 *
 * Our stop is a ptrace trap that the kernel treats like a signal: every
 * interruptible system call the thread sits in is broken off.  Most return
 * a restart code (-ERESTARTNOHAND, -ERESTARTSYS, ...) that the kernel turns
 * into a transparent restart when no handler runs; the epoll waits return
 * -EINTR outright (ep_poll: "if (signal_pending(current)) res = -EINTR"),
 * so a program without an EINTR retry would see our visit.
 * tresume_fix_syscall() gives such a wait the restart code it lacks.
 *
 * It also records how long each thread was held when FP_STOP_STATS names a
 * file (for the benchmark; see tests/bench/run.sh).
 *
 * Never: change a thread that is not in a ptrace-stop inside signal
 * delivery (interrupt, group or signal-delivery stop); allocate or lock in
 * tresume_fix_syscall() (it runs from signal handlers too).
 */
#ifndef FP_TRESUME_H
#define FP_TRESUME_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

/*
 * If `r` are the registers of a thread stopped on its way out of an epoll
 * wait that our stop broke off with -EINTR, change them so that the kernel
 * restarts the wait unless a signal handler runs first (then the program
 * sees EINTR, as it would have without us).  True if `r` was changed.
 * `pid` is the thread's process (to check the instruction at the pc).
 */
bool tresume_fix_regs(pid_t pid, struct user_regs_struct *r);

/*
 * The same for thread `tid` in a ptrace-stop, through PTRACE_GETREGS and
 * PTRACE_SETREGS.  Call it after any registers of ours are put back and
 * before the thread is resumed or detached.  Async-signal-safe.
 */
void tresume_fix_syscall(pid_t pid, pid_t tid);

/*
 * When FP_STOP_STATS names a file, append "HOLDER TID HELD_NS STOP_NS" to
 * it: thread `tid` was held from `stopped_ns` (now_ns() clock) until now,
 * and its longest ptrace-stop in that time, from the moment we saw it
 * stopped to the moment we resumed it, lasted `longest_stop_ns` (a holder
 * that never resumes it before the end passes 0: the whole hold).
 * Not async-signal-safe; errors are ignored (it is a measurement).
 */
void tresume_note_held(const char *holder, pid_t tid, uint64_t stopped_ns,
    uint64_t longest_stop_ns);

#endif
