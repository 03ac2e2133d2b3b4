/*
 * tstop — stop one thread of another process with ptrace, and let it go:
 * the one ptrace holder, for the native unwinder (tstop_stop() and
 * tstop_resume()) and for the injector, which runs the thread while it
 * holds it (tstop_seize(), tstop_wait(), tstop_let_go(): inject/ptrace.c).
 *
 * tstop_stop() seizes the thread (PTRACE_SEIZE, never PTRACE_O_EXITKILL:
 * if we die, the target must live on) and interrupts it; when it returns 0
 * the thread is in a ptrace-stop and its registers and stack can be read.
 * tstop_resume() detaches.  If a signal was on its way to the thread when it
 * stopped, the stop is that signal's delivery-stop and the signal is handed
 * back at detach, so nothing the target should have received is lost; an
 * epoll wait the stop broke off is restarted (core/tresume.h), so the
 * program sees no EINTR for it.  Hold a thread only as long as its own
 * reading takes: it stands still meanwhile.
 *
 * It must never leave a thread stopped or traced: every failure path
 * detaches, and a thread that has not reached its stop when the timeout
 * expires (uninterruptible sleep) is detached by the next tstop call or by
 * tstop_release_all() as soon as it does.  A process stopped by SIGSTOP is
 * reported and left stopped exactly as it was.
 *
 * ptrace belongs to the thread that attached: stop and resume a tid from
 * the same thread of ours, and let nothing else in this process reap wait
 * statuses of the target (no waitpid(-1, ...) in a SIGCHLD handler).
 *
 * The seized tids are kept in one fixed-size registry so that
 * tstop_release_all(), which makes only async-signal-safe calls, can let
 * them all go from a SIGINT/SIGTERM handler or atexit, and so that a
 * thread that would not stop in time is let go by whichever call comes
 * next.
 */
#ifndef FP_TSTOP_H
#define FP_TSTOP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Stop thread `tid` (any thread of any process), waiting at most
 * `timeout_ms` for it to stop.  Returns 0 or an enum fp_status: FP_EEXITED
 * when the thread does not exist or exited, FP_EPERM when we may not trace
 * it (*cause says why: uid, CAP_SYS_PTRACE, Yama, another tracer), FP_ERR
 * otherwise (its process is job-control stopped, the timeout expired, ...).
 */
int tstop_stop(pid_t tid, int timeout_ms, char **cause);

/*
 * Let a thread stopped by tstop_stop() run again, re-delivering the signal
 * it was about to receive, if any.  Returns 0; FP_EEXITED if the thread died
 * while stopped (SIGKILL); FP_ERR if tstop did not stop it.
 */
int tstop_resume(pid_t tid);

/*
 * Detach every thread tstop holds: first the rescue function of
 * tstop_seize() (it puts back what its owner changed and lets its thread
 * go), then the rest.  Only async-signal-safe calls: may be called from a
 * signal handler (of the thread that stopped them) or atexit.
 */
void tstop_release_all(void);

/*
 * For a holder that makes the thread run while it holds it
 * (inject/ptrace.c): seize thread `tid` of process `pid` and interrupt
 * it, registered as the caller's.  Returns 0 with the stop on its way
 * (wait for it with tstop_wait()), or an error as tstop_stop() says.
 * `rescue` (async-signal-safe) is what tstop_release_all() calls first to
 * have the caller let its threads go.
 */
int tstop_seize(pid_t pid, pid_t tid, void (*rescue)(void), char **cause);

/*
 * The next wait status of seized thread `tid` (waitpid, __WALL), looking
 * every 50 us until `deadline_ns` (now_ns() clock) and every 1 ms after
 * the first ~100 ms.  Returns tid, 0 when the deadline passed, -1 on error.
 */
pid_t tstop_wait(pid_t tid, int *status, uint64_t deadline_ns);

/*
 * A thread of tstop_seize() is no longer the caller's: `detached` (or
 * gone), or else still traced and not stopped, to be detached as soon as
 * it stops by the next tstop call or tstop_release_all().
 * Async-signal-safe.
 */
void tstop_let_go(pid_t tid, bool detached);

#endif
