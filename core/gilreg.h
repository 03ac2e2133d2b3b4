/*
 * gilreg — which flight_profiler process runs `gilstat on` for a target,
 * so that `gilstat off` in another one can end it.
 *
 * Our probes are file descriptors of the process that runs `gilstat on`
 * (PyFlightProfiler's stay patched into the target instead): `off` can only
 * ask that process to end, as Ctrl-C would.  It finds it in a per-user
 * directory, /tmp/.flight_profiler-gilstat-UID (0700, ours, no symlink),
 * one file per target holding the runner's pid, flock()ed for as long as
 * it runs: a lock that nobody holds is a run that ended (even killed).
 * Another user's `gilstat on` is not seen (its directory is its own, and
 * a signal to it would be refused anyway).
 */
#ifndef FP_GILREG_H
#define FP_GILREG_H

#include <stdbool.h>
#include <sys/types.h>

struct gilreg;

/*
 * Register this process as running `gilstat on` for `target`.  FP_ERR
 * with a one-line cause when another of ours already runs it (its pid in
 * *other) or the directory cannot be trusted.
 */
int gilreg_claim(pid_t target, struct gilreg **gp, pid_t *other, char **cause);
/* The run is over: the file goes, the lock with it. */
void gilreg_release(struct gilreg *g);

/*
 * End the `gilstat on` that another process of ours runs for `target`:
 * SIGTERM to it, then wait (up to timeout_ms) until its run has ended.
 * *runner is its pid, 0 if none runs (FP_OK then too).  A runner that is
 * this very process is told through `self_stop` instead of a signal.
 */
int gilreg_stop(pid_t target, pid_t *runner, unsigned timeout_ms, void (*self_stop)(void),
    char **cause);

#endif
