/*
 * inject — load a shared library into a live process and call its
 * bootstrap function, from one of the process's own threads, hijacked at a
 * safe point for the length of three calls (dlopen, dlsym, bootstrap).
 *
 * It must never run code on a thread that may hold a libc or loader lock
 * (inside malloc, inside dlopen), never compute target addresses from our
 * own libc, never load a library twice, and never leave the target
 * stopped, traced, with its registers changed or with our memory mapped.
 */
#ifndef FP_INJECT_H
#define FP_INJECT_H

#include <stdbool.h>
#include <sys/types.h>

struct inject_opts {
	int timeout_ms;		/* whole operation; 0 = default 10000 */
	/*
	 * The library is already loaded (a forked child's inherited agent):
	 * call its bootstrap again.  It must be mapped under exactly
	 * lib_path, the name it was loaded by, so that dlopen() returns that
	 * copy; without this, a mapped library is refused.
	 */
	bool loaded;
};

/*
 * Load `lib_path` (a path valid inside the target's mount namespace) into
 * process `pid` with dlopen(RTLD_NOW) executed by one of its threads at a
 * safe point, then call `symbol`(arg) (a `void symbol(const char *arg)`
 * resolved with dlsym in the target) and return.  The library's bootstrap
 * must return quickly (it starts its own thread).  Returns an enum
 * fp_status; on failure *cause says what happened and what to do.  On
 * every path the target is left running, untraced, unpatched, with its
 * registers, extended state and interrupted system call restored.
 *
 * `arg` (may be NULL) is copied into memory the injector maps in the target
 * and unmaps as soon as `symbol` returns: the bootstrap must copy the
 * string before it returns, never hand the pointer to its thread.
 */
int inject_load(pid_t pid, const char *lib_path, const char *symbol,
    const char *arg, const struct inject_opts *opts, char **cause);

/*
 * For fatal-signal handlers and atexit of the program that injects: if an
 * injection is under way, put the hijacked thread's registers back and
 * detach it, and every other thread core/tstop holds (it is
 * tstop_release_all()).  Async-signal-safe; call it from the thread that
 * called inject_load().  The scratch mapping is leaked in that case.
 */
void inject_release_all(void);

#endif
